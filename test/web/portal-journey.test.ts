import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AccessRequests } from '../../src/portal/access/service.js';
import { listMail } from '../../src/portal/mail.js';
import type { Worker } from '../../src/worker.js';
import { buildWebContext, screenshot, watchErrors, type WebContext } from '../helpers/browser.js';
import { startTestWorker, startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.js';

/**
 * The customer's whole way from nothing to a working integration, as a person clicks it:
 * sign up, confirm the email, ask for live access (approved on the command line's code path),
 * copy the test secret, call /v1, see the lookup, set a webhook, complete an address, see the
 * delivery, invite a viewer who cannot see secrets. With VOUCH_SCREENSHOTS=1, screenshots land in docs/images/.
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

const EMAIL = `founder-${Date.now()}@lender.example`;
const VIEWER = `analyst-${Date.now()}@lender.example`;
const PASSWORD = 'a strong passphrase 42';

/** The newest link to `path` mailed to `to` (the sign-up mail is prepared just after the answer). */
async function mailedLink(to: string, path: string): Promise<string> {
  const pattern = new RegExp(`https?://\\S+${path}\\?token=[A-Za-z0-9_-]+`);
  for (let end = Date.now() + 5_000; ; await new Promise((resolve) => setTimeout(resolve, 25))) {
    const [mail] = await listMail(web.database.db, { to, limit: 1 });
    const link = pattern.exec(mail?.text ?? '')?.[0];
    if (link) return link;
    if (Date.now() > end) throw new Error(`no ${path} link mailed to ${to}`);
  }
}


async function choose(page: Page, label: string, option: string | RegExp): Promise<void> {
  await page.getByLabel(label, { exact: true }).first().click();
  await page.getByRole('option', { name: option }).click();
}

describe('the customer portal in a browser', () => {
  it('goes from sign-up to a live integration, with webhooks and a read-only teammate', { timeout: 180_000 }, async () => {
    const { context, page } = await web.newPage();
    const errors = watchErrors(page);

    // Sign up: the mailed link confirms the address and takes the password; a new organization,
    // not yet enabled, and a session.
    await page.goto('/signup');
    await screenshot(page, 'portal-signup');
    await page.getByLabel('Your name').fill('Ngozi Eze');
    await page.getByLabel('Work email').fill(EMAIL);
    await page.getByLabel('Company name').fill('Eze Microfinance');
    await page.getByRole('button', { name: 'Create account' }).click();
    await expect.poll(() => page.getByText('This Vouch server sends no email').isVisible(), { timeout: 15_000 }).toBe(true);
    await page.goto(await mailedLink(EMAIL, '/complete-sign-up'));
    await page.getByLabel(/^Choose a password/).fill(PASSWORD);
    await page.getByRole('button', { name: 'Create account' }).click();
    await expect.poll(() => page.getByRole('heading', { name: 'Get started' }).isVisible(), { timeout: 15_000 }).toBe(true);
    await screenshot(page, 'portal-get-started');

    // Ask for live access; an account manager approves it (the code path of `vouch org enable`).
    await page.goto('/api-access');
    await choose(page, 'Risk level', /^LOW/);
    await page.getByLabel('What you will use Vouch for (optional)').fill('Loan applicants');
    await page.getByRole('button', { name: 'Send the request' }).click();
    await expect.poll(() => page.getByText('Your request is with an account manager').isVisible()).toBe(true);
    const membership = await web.database.db
      .selectFrom('memberships as m')
      .innerJoin('people as p', 'p.id', 'm.person_id')
      .select('m.org_id')
      .where('p.email', '=', EMAIL)
      .executeTakeFirstOrThrow();
    const orgId = membership.org_id;
    await new AccessRequests(web.database.db).approve(orgId, { riskLevel: 'LOW', payloadType: 'FULL' }, { kind: 'cli' });
    await page.reload();
    await expect.poll(() => page.getByText('Enabled', { exact: true }).isVisible()).toBe(true);
    await screenshot(page, 'portal-api-access');

    // Copy the test secret and call the API with it.
    await page.goto('/api-keys');
    await page.getByRole('button', { name: 'Reveal test secret' }).click();
    const secretField = page.getByRole('textbox', { name: 'Test secret value', exact: true });
    await secretField.waitFor();
    const testSecret = await secretField.inputValue();
    expect(testSecret).toMatch(/^sk_test_[A-Za-z0-9_-]{43}$/);
    await screenshot(page, 'portal-api-keys');
    const lookup = await fetch(`${web.baseUrl}/v1/verifications/identities/bvn/22345678901`, {
      method: 'POST',
      headers: { authorization: `Bearer ${testSecret}`, 'content-type': 'application/json' },
      body: JSON.stringify({ firstname: 'Adaeze', lastname: 'Okonkwo', dob: '14-03-1990' }),
    });
    expect(lookup.status).toBe(200);

    // The lookup is in the explorer, masked.
    await page.goto('/verifications');
    await expect.poll(() => page.getByRole('cell', { name: '223******01' }).isVisible(), { timeout: 10_000 }).toBe(true);
    expect(await page.content()).not.toContain('22345678901');
    await screenshot(page, 'portal-verifications');

    // Set the webhook to a receiver, then complete an address through the test helper.
    await page.goto('/webhooks');
    await page.getByLabel('Endpoint URL (test)').fill(receiver.url);
    await page.getByRole('button', { name: 'Save URL' }).click();
    await expect.poll(() => page.getByText('Saved: test events now go to this URL.').isVisible()).toBe(true);
    await page.getByRole('button', { name: 'Reveal secret' }).click();
    const signingSecret = await page.getByRole('textbox', { name: 'Signing secret value' }).inputValue();
    receiver.setSecret(signingSecret);
    const created = await fetch(`${web.baseUrl}/v1/verifications/addresses`, {
      method: 'POST',
      headers: { authorization: `Bearer ${testSecret}`, 'content-type': 'application/json' },
      body: JSON.stringify({ street: '12 Admiralty Way', lga: 'Eti-Osa', state: 'Lagos', applicant: { firstname: 'Adaeze', lastname: 'Okonkwo', idType: 'BVN', idNumber: '22345678901' } }),
    });
    expect(created.status).toBe(201);
    const { data: address } = (await created.json()) as { data: { id: number } };
    const completed = await fetch(`${web.baseUrl}/v1/test-helpers/addresses/${address.id}/complete`, {
      method: 'POST',
      headers: { authorization: `Bearer ${testSecret}`, 'content-type': 'application/json' },
      body: JSON.stringify({ outcome: 'verified' }),
    });
    expect(completed.status).toBe(200);
    const arrived = await receiver.waitFor((r) => JSON.parse(r.rawBody).type === 'address.completed', 15_000);
    expect(receiver.verify(arrived, signingSecret)).toBe(true);

    // The delivery is in the log (the page refreshes it), with its attempt.
    await page.reload();
    const row = page.getByRole('row', { name: /address\.completed/ });
    await expect.poll(() => row.getByText('delivered').isVisible(), { timeout: 15_000 }).toBe(true);
    await row.getByRole('button', { name: /Details of address\.completed/ }).click();
    await expect.poll(() => page.getByRole('dialog').getByRole('cell', { name: '204' }).isVisible()).toBe(true);
    await screenshot(page, 'portal-webhooks');
    await page.keyboard.press('Escape');

    // The verification's own page: verified, with its timeline and delivery.
    await page.goto(`/verifications/address/${address.id}`);
    await expect.poll(() => page.getByText('Verified', { exact: true }).first().isVisible(), { timeout: 10_000 }).toBe(true);
    await expect.poll(() => page.getByText('address.completed').isVisible()).toBe(true);
    expect(await page.content()).not.toContain('22345678901');
    await screenshot(page, 'portal-verification-detail');

    // Invite a viewer.
    await page.goto('/team');
    await page.getByLabel('Email').fill(VIEWER);
    await choose(page, 'Role', /^Viewer/);
    await page.getByRole('button', { name: 'Send invitation' }).click();
    await expect.poll(() => page.getByText('Invitation sent').isVisible()).toBe(true);
    await screenshot(page, 'portal-team');
    await page.goto('/billing');
    await expect.poll(() => page.getByRole('heading', { name: /Checks in the last 30 days/ }).isVisible(), { timeout: 10_000 }).toBe(true);
    // A new organization's wallet is empty: the page says what to do.
    await expect.poll(() => page.getByText('No ledger entries').isVisible()).toBe(true);
    await expect.poll(() => page.getByText(/they answer 402 while it is empty/).isVisible(), { timeout: 10_000 }).toBe(true);
    await screenshot(page, 'portal-billing');
    expect(errors).toEqual([]);
    await context.close();

    // The viewer accepts in a browser of their own and cannot see secrets or roll keys.
    const viewer = await web.newPage({ phone: true });
    await viewer.page.goto(await mailedLink(VIEWER, '/invitations/accept'));
    await viewer.page.getByLabel('Your name').fill('Tunde Bello');
    await viewer.page.getByLabel(/^Choose a password/).fill('viewer passphrase 7');
    await viewer.page.getByRole('button', { name: 'Accept the invitation' }).click();
    await expect.poll(() => viewer.page.getByRole('heading', { name: 'Get started' }).isVisible(), { timeout: 15_000 }).toBe(true);
    await viewer.page.goto('/api-keys');
    await expect.poll(() => viewer.page.getByLabel('live secret hint').isVisible(), { timeout: 10_000 }).toBe(true);
    expect(await viewer.page.getByRole('textbox', { name: 'Test secret value' }).count()).toBe(0);
    expect(await viewer.page.getByRole('button', { name: /Roll/ }).count()).toBe(0);
    expect(await viewer.page.content()).not.toContain(testSecret);
    await screenshot(viewer.page, 'portal-api-keys-viewer-phone');
    await viewer.context.close();
  });
});
