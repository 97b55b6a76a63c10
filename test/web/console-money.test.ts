import { sql } from 'kysely';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildWebContext, screenshot, watchErrors, type WebContext } from '../helpers/browser.js';
import { addMember, operatorUser, portal, portalOrg, portalUser } from '../helpers/portal.js';

/**
 * The console's organization detail and money as an operator uses them: from the Organizations
 * list to one organization, credit its wallet with a reason and see the balance and the ledger
 * row (naming the operator); refuse a debit beyond the balance; set a price on the Prices page.
 * With VOUCH_SCREENSHOTS=1, docs/images/console-organization.png.
 */
let web: WebContext;

beforeAll(async () => {
  web = await buildWebContext();
}, 90_000);
afterAll(async () => {
  await web?.close();
});

const seen = (page: Page, text: string | RegExp) => () => page.getByText(text).first().isVisible();

async function signedIn(phone = false) {
  const operator = await operatorUser(web.app, web.database.db, { origin: web.baseUrl });
  const [name, value] = operator.cookie.split('=') as [string, string];
  const { context, page } = await web.newPage({ phone });
  await context.addCookies([{ name, value, url: web.baseUrl }]);
  return { operator, page };
}

/** Two deliveries of the live mode: one delivered an hour ago, one failing twice since (raw SQL: the payload is beside the point). */
async function failingDeliveries(orgId: string) {
  const start = Date.now() - 3_600_000;
  for (const [status, codes] of [['delivered', [200]], ['pending', [500, null]]] as const) {
    const { rows } = await sql<{ id: number }>`
      insert into webhook_deliveries (message_id, org_id, mode, event_type, payload, status, attempts)
      values (${`msg_${Math.random().toString(36).slice(2)}`}, ${orgId}, 'live', 'webhook.test', '{}', ${status}, ${codes.length})
      returning id`.execute(web.database.db);
    for (const [i, code] of codes.entries()) {
      const at = new Date(start + (status === 'pending' ? 600_000 : 0) + i * 60_000);
      await sql`insert into webhook_attempts (delivery_id, attempted_at, status_code, latency_ms, error)
        values (${rows[0]!.id}, ${at}, ${code}, 40, ${code === null ? 'connect ETIMEDOUT' : null})`.execute(web.database.db);
    }
  }
}

describe('organizations and money in the console', () => {
  it('an operator opens an organization, credits it with a reason and sees the balance and the ledger row; a debit beyond the balance is refused', { timeout: 120_000 }, async () => {
    const { org, owner } = await portalOrg(web.database.db, { fund: 250_000 });
    const developer = await portalUser(web.database.db, { name: 'Dayo Developer' });
    await addMember(web.database.db, org.id, developer.personId, 'developer');
    // Some test checks and a live endpoint that has been failing since its last success.
    for (let i = 0; i < 3; i++) {
      const res = await fetch(`${web.baseUrl}/v1/verifications/identities/tin/23456789-0001`, { headers: { authorization: `Bearer ${org.testSecret}` } });
      expect(res.status).toBe(200);
    }
    await web.database.db.insertInto('webhook_endpoints').values({ org_id: org.id, mode: 'live', url: 'https://hooks.example.com/vouch', secret: 'whsec_dGVzdHNlY3JldHRlc3RzZWNyZXQ=' }).execute();
    await failingDeliveries(org.id);
    const { operator, page } = await signedIn();
    const errors = watchErrors(page);

    await page.goto('/console/organizations');
    await page.getByLabel('Search organizations').fill(org.name);
    await page.getByRole('link', { name: org.name }).click();
    await expect.poll(seen(page, 'API secrets'), { timeout: 15_000 }).toBe(true);
    expect(await page.getByTestId('balance').textContent()).toBe('₦2,500.00');
    expect(await page.getByRole('table', { name: 'Members' }).getByText(developer.email).isVisible()).toBe(true);
    expect(await page.getByRole('table', { name: 'API secrets' }).getByRole('row').count()).toBe(3);
    expect(await page.getByLabel('live webhook').getByText(/Failing since .* \(2 failed attempts in a row\)/).isVisible()).toBe(true);
    expect(await page.getByRole('table', { name: 'Test checks' }).getByRole('row', { name: /TIN lookup 3 ₦0\.00/ }).isVisible()).toBe(true);
    expect(await page.content()).not.toContain(org.testSecret);
    for (const heading of ['API access', 'Members', 'API secrets', 'Webhooks', 'Usage in the last 30 days', 'Ledger']) {
      expect(await page.getByRole('heading', { name: heading }).isVisible()).toBe(true);
    }

    await page.getByRole('button', { name: 'Credit or debit' }).click();
    const dialog = page.getByRole('dialog');
    await dialog.getByLabel('Amount').fill('12500.5');
    await expect.poll(() => dialog.getByText('₦12,500.50 = 1,250,050 kobo').isVisible(), { timeout: 5_000 }).toBe(true);
    await dialog.getByRole('button', { name: 'Credit ₦12,500.50' }).click();
    // The reason is required at the field; nothing is sent without it.
    await expect.poll(seen(page, /Say why: the audit log keeps it/), { timeout: 5_000 }).toBe(true);
    await dialog.getByLabel('Reason').fill('Goodwill for the outage of 3 March');
    await dialog.getByRole('button', { name: 'Credit ₦12,500.50' }).click();
    await expect.poll(seen(page, `Credited ₦12,500.50 to ${org.name}: the balance is ₦15,000.50`), { timeout: 15_000 }).toBe(true);
    await expect.poll(() => page.getByTestId('balance').textContent(), { timeout: 10_000 }).toBe('₦15,000.50');
    const row = page.getByRole('table', { name: 'Ledger' }).getByRole('row', { name: /Goodwill for the outage of 3 March/ });
    await expect.poll(() => row.isVisible(), { timeout: 10_000 }).toBe(true);
    expect(await row.textContent()).toMatch(/Credit.*Credit by your account manager: Goodwill for the outage of 3 March.*\+₦12,500\.50.*₦15,000\.50.*Ada Ops/);
    await screenshot(page, 'console-organization');

    // The customer sees the credit in their ledger.
    const ledger = (await portal(web.app, owner, { method: 'GET', url: `/api/orgs/${org.id}/ledger`, headers: { origin: web.baseUrl } })).json();
    expect(ledger.data[0]).toMatchObject({ kind: 'credit', amount: 1_250_050, description: 'Credit by your account manager: Goodwill for the outage of 3 March' });
    const entry = await web.database.db.selectFrom('ledger_entries').selectAll().where('org_id', '=', org.id).orderBy('id', 'desc').executeTakeFirstOrThrow();
    expect(entry.actor_person_id).toBe(operator.personId);

    // A debit beyond the balance: the form says so before sending.
    await page.getByRole('button', { name: 'Credit or debit' }).click();
    await dialog.getByText('Debit (take money off)').click();
    await dialog.getByLabel('Amount').fill('20000');
    await dialog.getByLabel('Reason').fill('Transfer credited twice');
    await dialog.getByRole('button', { name: 'Debit ₦20,000.00' }).click();
    await expect.poll(seen(page, /a debit may not take it below zero/), { timeout: 5_000 }).toBe(true);
    await dialog.getByLabel('Amount').fill('5000');
    await dialog.getByRole('button', { name: 'Debit ₦5,000.00' }).click();
    await expect.poll(seen(page, `Debited ₦5,000.00 from ${org.name}: the balance is ₦10,000.50`), { timeout: 15_000 }).toBe(true);
    await expect.poll(() => page.getByTestId('balance').textContent(), { timeout: 10_000 }).toBe('₦10,000.50');
    expect(errors).toEqual([]);

    // At phone width the page fits: tables scroll inside their sections, not the page.
    const phone = await web.newPage({ phone: true });
    const [cookieName, cookieValue] = operator.cookie.split('=') as [string, string];
    await phone.context.addCookies([{ name: cookieName, value: cookieValue, url: web.baseUrl }]);
    await phone.page.goto(`/console/organizations/${org.id}`);
    await expect.poll(() => phone.page.getByRole('heading', { name: 'Ledger' }).isVisible(), { timeout: 15_000 }).toBe(true);
    expect(await phone.page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
  });

  it('an operator sets a price on the Prices page at phone width, audited', { timeout: 120_000 }, async () => {
    const { page } = await signedIn(true);
    const errors = watchErrors(page);
    await page.goto('/console');
    await page.getByRole('button', { name: 'Open navigation' }).click();
    await page.getByRole('link', { name: 'Prices' }).click();
    await expect.poll(seen(page, 'TIN lookup'), { timeout: 15_000 }).toBe(true);
    await page.getByRole('button', { name: 'Change the price of TIN lookup' }).click();
    const dialog = page.getByRole('dialog');
    await dialog.getByLabel('New price').fill('72.5');
    await dialog.getByRole('button', { name: 'Save price' }).click();
    await expect.poll(seen(page, 'TIN lookup now costs ₦72.50 (was ₦50.00)'), { timeout: 15_000 }).toBe(true);
    const tinRow = page.getByRole('table', { name: 'Prices' }).getByRole('row', { name: /TIN lookup/ });
    await expect.poll(async () => (await tinRow.textContent()) ?? '', { timeout: 10_000 }).toMatch(/set₦72\.50₦50\.00/);

    const prices = await web.database.db.selectFrom('prices').selectAll().where('type', '=', 'tin').executeTakeFirstOrThrow();
    expect(Number(prices.amount)).toBe(7_250);
    const audit = await web.database.db.selectFrom('audit_events').selectAll().where('action', '=', 'price.set').where('target', '=', 'tin').executeTakeFirstOrThrow();
    expect(audit).toMatchObject({ actor_kind: 'operator', before: { amount: 5_000 }, after: { amount: 7_250 } });
    expect(errors).toEqual([]);
  });
});
