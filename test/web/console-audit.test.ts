import { readFile } from 'node:fs/promises';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { enqueueEvent } from '../../src/webhooks/events.js';
import type { Worker } from '../../src/worker.js';
import { buildWebContext, screenshot, watchErrors, type WebContext } from '../helpers/browser.js';
import { operatorUser, portal, type PortalUser } from '../helpers/portal.js';
import { connectReceiver, startTestWorker, startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.js';

/**
 * The console's audit log and deliveries as an operator uses them: filter the log by an
 * organization and download it as CSV; open Deliveries and resend a failed webhook, which
 * arrives and is audited with the operator. With VOUCH_SCREENSHOTS=1: docs/images/console-audit-log.png.
 */
let web: WebContext;
let operator: PortalUser;
let receiver: WebhookReceiver;
let worker: Worker | undefined;

beforeAll(async () => {
  web = await buildWebContext();
  operator = await operatorUser(web.app, web.database.db, { origin: web.baseUrl });
  receiver = await startWebhookReceiver();
}, 90_000);
afterAll(async () => {
  await worker?.stop();
  await receiver?.close();
  await web?.close();
});

const eventually = <T>(check: () => Promise<T>, timeout = 15_000) => expect.poll(check, { timeout });
/** Console errors other than the browser's note of an expected 4xx answer. */
const unexpected = (errors: string[]) => errors.filter((e) => !/Failed to load resource: the server responded with a status of 4\d\d/.test(e));

async function signedIn(user: PortalUser, phone = false): Promise<Page> {
  const [name, value] = user.cookie.split('=') as [string, string];
  const { context, page } = await web.newPage({ phone });
  await context.addCookies([{ name, value, url: web.baseUrl }]);
  return page;
}

function disable(orgId: string, reason: string) {
  return portal(web.app, operator, { method: 'POST', url: `/api/console/organizations/${orgId}/disable`, payload: { reason }, headers: { origin: web.baseUrl } });
}

describe('the console audit log and deliveries', () => {
  it('an operator filters the audit log by organization and downloads it as CSV', { timeout: 120_000 }, async () => {
    const ikoyi = await web.org({ name: 'Ikoyi Thrift Bank' });
    const other = await web.org({ name: 'Lekki Credit' });
    expect((await disable(ikoyi.id, 'KYC documents expired, per compliance')).statusCode).toBe(200);
    expect((await disable(other.id, 'Unpaid invoice')).statusCode).toBe(200);

    const page = await signedIn(operator);
    const errors = watchErrors(page);
    await page.goto('/console');
    await page.getByRole('link', { name: 'Audit log' }).click();
    await page.waitForURL('**/console/audit');
    const table = page.getByRole('table', { name: 'Audit log' });
    await eventually(() => table.getByText('Lekki Credit').first().isVisible()).toBe(true);

    await page.getByRole('combobox', { name: 'Organization' }).fill('Ikoyi');
    await page.getByRole('option', { name: 'Ikoyi Thrift Bank' }).click();
    await eventually(() => table.getByText('Lekki Credit').count()).toBe(0);
    const row = table.getByRole('row', { name: /Ikoyi Thrift Bank/ });
    await eventually(() => row.count()).toBe(1);
    expect(await row.getByText('access.disabled').isVisible()).toBe(true);
    expect(await row.getByText(operator.email).isVisible()).toBe(true);
    expect(await row.getByText('true → false').isVisible()).toBe(true);
    expect(await row.getByText('KYC documents expired, per compliance').isVisible()).toBe(true);
    await screenshot(page, 'console-audit-log');

    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('link', { name: 'Download CSV' }).click()]);
    expect(download.suggestedFilename()).toMatch(/^vouch-audit-start-to-\d{4}-\d\d-\d\d\.csv$/);
    const lines = (await readFile((await download.path())!, 'utf8')).trim().split('\r\n');
    expect(lines[0]).toBe('id,created_at,organization_id,organization,actor_kind,actor_name,actor_email,action,target,target_person,before,after');
    expect(lines).toHaveLength(2);
    expect(lines[1]).toContain(`,${ikoyi.id},Ikoyi Thrift Bank,operator,Ada Ops,${operator.email},access.disabled,`);
    expect(lines.join('\n')).not.toContain('Lekki Credit');
    expect(unexpected(errors)).toEqual([]);
  });

  it('an operator opens Deliveries and resends a failed delivery; it arrives and the audit log names them', { timeout: 120_000 }, async () => {
    const org = await web.org({ name: 'Surulere Savings' });
    await connectReceiver(web.database, receiver, org.id, 'live');
    receiver.failNext(4, 502);
    worker = await startTestWorker(web.database);
    const webhookId = await enqueueEvent(web.database.db, { orgId: org.id, mode: 'live', type: 'webhook.test', data: { message: 'resend me' } });
    const delivery = () => web.database.db.selectFrom('webhook_deliveries').selectAll().where('message_id', '=', webhookId).executeTakeFirstOrThrow();
    await eventually(async () => (await delivery()).status).toBe('failed');
    const { id } = await delivery();

    const page = await signedIn(operator);
    const errors = watchErrors(page);
    await page.goto('/console');
    await page.getByRole('link', { name: 'Deliveries' }).click();
    await page.waitForURL('**/console/deliveries');
    const backlog = page.getByRole('table', { name: 'Webhook backlog' });
    await eventually(() => backlog.getByRole('row', { name: /Surulere Savings live 0 0 — 1/ }).isVisible()).toBe(true);
    await page.getByRole('button', { name: `Resend delivery ${id} (webhook.test) to Surulere Savings` }).click();
    await eventually(() => page.getByText('webhook.test to Surulere Savings queued again').isVisible()).toBe(true);
    await receiver.waitFor((request) => request.id === webhookId && request.answeredWith === 204);
    await eventually(async () => (await delivery()).status).toBe('delivered');
    await eventually(() => page.getByRole('button', { name: `Resend delivery ${id} (webhook.test) to Surulere Savings` }).count()).toBe(0);

    const audit = await web.database.db.selectFrom('audit_events').selectAll().where('org_id', '=', org.id).where('action', '=', 'webhook.resent').execute();
    expect(audit).toHaveLength(1);
    expect(audit[0]).toMatchObject({ actor_kind: 'operator', actor_id: operator.personId, target: webhookId });

    await page.setViewportSize({ width: 375, height: 812 });
    await page.getByRole('button', { name: 'Open navigation' }).click();
    await page.getByRole('link', { name: 'Audit log' }).click();
    await page.getByLabel('Target contains', { exact: true }).fill(webhookId);
    await eventually(() => page.getByRole('table', { name: 'Audit log' }).getByText('webhook.resent').isVisible()).toBe(true);
    expect(unexpected(errors)).toEqual([]);
  });
});
