import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Page } from 'playwright-core';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAgent } from '../../src/agents/service.js';
import { listMail } from '../../src/portal/mail.js';
import { ADDRESS_BODY, deliveriesOf, multipartBody } from '../agents/fixtures.js';
import { bearer, NOWHERE_WEBHOOK_URL } from '../helpers/app.js';
import { buildWebContext, screenshot, watchErrors, type WebContext } from '../helpers/browser.js';
import { operatorUser } from '../helpers/portal.js';

/**
 * Field agents in the operator console, as an operator uses them: adding an agent shows the
 * one-time sign-in link once (and mails it); a visit report filed from far outside the place's
 * state waits in the review queue with its evidence, and approving it completes the verification
 * and sends the customer's webhook. With VOUCH_SCREENSHOTS=1: docs/images/console-review-queue.png.
 */
let web: WebContext;
let dataDir: string;

beforeAll(async () => {
  dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'vouch-console-agents-web-'));
  web = await buildWebContext({ config: { dataDir }, webhookUrl: NOWHERE_WEBHOOK_URL });
}, 90_000);
afterAll(async () => {
  await web?.close();
  await fs.rm(dataDir, { recursive: true, force: true });
});

const seen = (page: Page, text: string | RegExp) => () => page.getByText(text).first().isVisible();

async function signedInOperator(phone = false) {
  const operator = await operatorUser(web.app, web.database.db, { origin: web.baseUrl });
  const [name, value] = operator.cookie.split('=') as [string, string];
  const { context, page } = await web.newPage({ phone });
  await context.addCookies([{ name, value, url: web.baseUrl }]);
  return page;
}

describe('field agents in the console', () => {
  it('an operator adds an agent and sees the one-time sign-in link once', { timeout: 120_000 }, async () => {
    const page = await signedInOperator();
    const errors = watchErrors(page);
    await page.goto('/console');
    await page.getByRole('link', { name: 'Field agents' }).click();
    await expect.poll(seen(page, 'No field agents yet'), { timeout: 15_000 }).toBe(true);
    await page.getByRole('button', { name: 'Add an agent' }).click();
    const dialog = page.getByRole('dialog');
    await dialog.getByRole('button', { name: 'Add and send the link' }).click();
    await expect.poll(seen(page, 'Choose at least one state'), { timeout: 10_000 }).toBe(true);
    await dialog.getByLabel('Full name').fill('Chinedu Okafor');
    await dialog.getByLabel('Email').fill('chinedu@field.example');
    await dialog.getByLabel('Phone').fill('0803 555 1234');
    await dialog.getByLabel('States covered').click();
    await page.getByRole('option', { name: 'Lagos', exact: true }).click();
    // A multi-select stays open for more: a click elsewhere closes it.
    await dialog.getByLabel('Phone').click();
    await dialog.getByLabel('Only these LGAs (optional)').click();
    await page.getByRole('option', { name: 'Eti-Osa', exact: true }).click();
    await dialog.getByLabel('Full name').click();
    await dialog.getByRole('button', { name: 'Add and send the link' }).click();
    await expect.poll(seen(page, 'Sign-in link (shown only now)'), { timeout: 15_000 }).toBe(true);
    const link = await dialog.getByRole('textbox', { name: 'One-time sign-in link' }).inputValue();
    expect(link).toMatch(new RegExp(`^${web.baseUrl}/reset-password\\?token=[A-Za-z0-9_-]{43}&next=%2Ffield$`));
    const [mail] = await listMail(web.database.db, { to: 'chinedu@field.example' });
    expect(mail!.text).toContain(link);
    expect(await dialog.getByText('Chinedu Okafor covers Lagos (Eti-Osa)').isVisible()).toBe(true);
    await dialog.getByRole('button', { name: 'Done' }).click();
    const table = page.getByRole('table', { name: 'Field agents' });
    await expect.poll(() => table.getByText('Chinedu Okafor').isVisible(), { timeout: 15_000 }).toBe(true);
    expect(await table.getByText('Invited').isVisible()).toBe(true);
    // Shown once: nothing on the page carries the link any more.
    expect(await page.content()).not.toContain(new URL(link).searchParams.get('token')!);
    expect(errors).toEqual([]);
  });

  it('an operator approves a flagged visit in the review queue; the verification completes and the webhook is queued once', { timeout: 120_000 }, async () => {
    const org = await web.org({ riskLevel: 'LOW', fund: 10_000_000 });
    const agent = await createAgent(web.database.db, { name: 'Bisi Adeyemi', email: 'bisi@field.example', phone: '08031230000', states: ['Oyo'] });
    const created = await web.app.inject({ method: 'POST', url: '/v1/verifications/addresses', headers: bearer(org.liveSecret), payload: { ...ADDRESS_BODY, state: 'Oyo', lga: 'Ibadan North', street: '7 Bodija Road' } });
    expect(created.statusCode).toBe(201);
    const { id, reference } = created.json().data as { id: number; reference: string };
    const front = await sharp({ create: { width: 640, height: 480, channels: 3, background: '#b85' } }).jpeg().toBuffer();
    const street = await sharp({ create: { width: 640, height: 480, channels: 3, background: '#58b' } }).jpeg().toBuffer();
    // Filed from Kano for an address in Ibadan.
    const form = multipartBody({ outcome: 'verified', latitude: 12.0022, longitude: 8.592, neighborName: 'Mama Tunde', neighborComment: 'They moved in last year' }, [
      { filename: 'front.jpg', type: 'image/jpeg', bytes: front },
      { filename: 'street.jpg', type: 'image/jpeg', bytes: street },
    ]);
    const filed = await web.app.inject({ method: 'POST', url: `/v1/agent/tasks/address/${id}/report`, headers: { ...bearer(agent.credential), ...form.headers }, payload: form.payload });
    expect(filed.statusCode, filed.body).toBe(200);
    const completedHooks = async () => (await deliveriesOf(web.database.db, org.id)).filter((d) => d.type === 'address.completed');
    expect(await completedHooks()).toEqual([]);

    const page = await signedInOperator();
    const errors = watchErrors(page);
    await page.goto('/console');
    await page.getByRole('link', { name: 'Review queue' }).click();
    const card = page.getByRole('region', { name: `Address ${reference}` });
    await expect.poll(() => card.getByText(/^GPS position is about \d+ km outside Oyo$/).isVisible(), { timeout: 15_000 }).toBe(true);
    expect(await card.getByText('Bisi Adeyemi').isVisible()).toBe(true);
    expect(await card.getByText(/^about \d+ km outside Oyo$/).isVisible()).toBe(true);
    // The photos load through their signed links.
    const photo = card.getByRole('img', { name: `Photo 1 of ${reference}` });
    await expect.poll(() => photo.evaluate((img) => (img as HTMLImageElement).naturalWidth), { timeout: 15_000 }).toBe(640);
    await screenshot(page, 'console-review-queue');

    // At phone width the entry stacks: its actions in reach, nothing wider than the screen.
    const phone = await signedInOperator(true);
    await phone.goto('/console/reviews');
    await expect.poll(() => phone.getByRole('button', { name: `Approve ${reference}` }).isVisible(), { timeout: 15_000 }).toBe(true);
    expect(await phone.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    await phone.goto('/console/agents');
    await expect.poll(() => phone.getByRole('button', { name: 'Add an agent' }).isVisible(), { timeout: 15_000 }).toBe(true);
    expect(await phone.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);

    await page.getByRole('button', { name: `Approve ${reference}` }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Approve and complete' }).click();
    await expect.poll(seen(page, `${reference} is complete; ${org.name} is notified`), { timeout: 15_000 }).toBe(true);
    await expect.poll(seen(page, 'Nothing to review'), { timeout: 15_000 }).toBe(true);
    const record = (await web.app.inject({ method: 'GET', url: `/v1/verifications/addresses/${id}`, headers: bearer(org.liveSecret) })).json().data;
    expect(record).toMatchObject({ status: { status: 'Verified' }, flaggedForReview: true, reviewReason: expect.stringMatching(/outside Oyo/) });
    expect(await completedHooks()).toHaveLength(1);
    expect(errors).toEqual([]);
  });
});
