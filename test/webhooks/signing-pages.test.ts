import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Worker } from '../../src/worker.js';
import { buildWebContext, watchErrors, type WebContext } from '../helpers/browser.js';
import { operatorUser, portalOrg, type PortalUser } from '../helpers/portal.js';
import { connectReceiver, startTestWorker, startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.js';

/**
 * Choosing an endpoint's signing as people do it: a customer on the portal's Webhooks page picks
 * "VerifyMe style", saves and sends a test event that arrives with x-verifyme-signature; an
 * operator changes another endpoint to "Both" on the console's organization page.
 */
let web: WebContext;
let receiver: WebhookReceiver;
let worker: Worker;

beforeAll(async () => {
  web = await buildWebContext();
  receiver = await startWebhookReceiver();
  worker = await startTestWorker(web.database);
}, 90_000);
afterAll(async () => {
  await worker?.stop();
  await receiver?.close();
  await web?.close();
});

const seen = (page: Page, text: string | RegExp) => () => page.getByText(text).first().isVisible();

async function signedIn(user: PortalUser): Promise<Page> {
  const { context, page } = await web.newPage({});
  const [name, value] = user.cookie.split('=') as [string, string];
  await context.addCookies([{ name, value, url: web.baseUrl }]);
  return page;
}

async function choose(page: Page, scope: ReturnType<Page['getByLabel']> | Page, label: string, option: RegExp): Promise<void> {
  await scope.getByLabel(label, { exact: true }).first().click();
  await page.getByRole('option', { name: option }).click();
}

describe('choosing the signature headers', () => {
  it('on the portal: VerifyMe style, saved with the URL; the test event carries x-verifyme-signature', { timeout: 120_000 }, async () => {
    const { owner } = await portalOrg(web.database.db);
    const page = await signedIn(owner);
    const errors = watchErrors(page);
    await page.goto('/webhooks');
    await page.getByLabel('Endpoint URL (test)').fill(receiver.url);
    await choose(page, page, 'Signature headers', /VerifyMe style/);
    await page.getByRole('button', { name: 'Save URL' }).click();
    await expect.poll(seen(page, 'They are signed the VerifyMe way.'), { timeout: 10_000 }).toBe(true);
    await page.getByRole('button', { name: 'Reveal secret' }).click();
    const secret = await page.getByRole('textbox', { name: 'Signing secret value' }).inputValue();
    receiver.setSecret(secret);
    await page.getByRole('button', { name: 'Send test event' }).click();
    const arrived = await receiver.waitFor((r) => r.body?.type === 'webhook.test', 15_000);
    expect(receiver.verifyVerifyme(arrived, secret)).toBe(true);
    expect(arrived.headers['webhook-signature']).toBeUndefined();
    await page.reload();
    await expect.poll(async () => page.getByLabel('Signature headers', { exact: true }).first().inputValue(), { timeout: 10_000 }).toBe('VerifyMe style');
    expect(errors).toEqual([]);
  });

  it("on the console: an operator changes the live endpoint to Both, and it is audited", { timeout: 120_000 }, async () => {
    const { org } = await portalOrg(web.database.db);
    await connectReceiver(web.database, receiver, org.id, 'live');
    const operator = await operatorUser(web.app, web.database.db, { origin: web.baseUrl });
    const page = await signedIn(operator);
    const errors = watchErrors(page);
    await page.goto(`/console/organizations/${org.id}`);
    const card = page.getByLabel('live webhook');
    await expect.poll(async () => card.getByLabel('Signature headers', { exact: true }).first().isVisible(), { timeout: 15_000 }).toBe(true);
    expect(await card.getByLabel('Signature headers', { exact: true }).first().inputValue()).toBe('Standard Webhooks (webhook-signature)');
    expect(await page.getByLabel('test webhook').getByLabel('Signature headers', { exact: true }).count()).toBe(0);
    await choose(page, card, 'Signature headers', /^Both$/);
    await expect.poll(seen(page, 'The live webhook is now signed: Both'), { timeout: 10_000 }).toBe(true);
    const row = await web.database.db.selectFrom('webhook_endpoints').select('signing').where('org_id', '=', org.id).where('mode', '=', 'live').executeTakeFirstOrThrow();
    expect(row.signing).toBe('both');
    const audit = await web.database.db.selectFrom('audit_events').select(['action', 'actor_id', 'after']).where('org_id', '=', org.id).execute();
    expect(audit).toEqual([{ action: 'webhook.signing_set', actor_id: operator.personId, after: { signing: 'both' } }]);
    expect(errors).toEqual([]);
  });
});
