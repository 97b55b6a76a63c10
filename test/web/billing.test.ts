import { readFile } from 'node:fs/promises';
import { sql } from 'kysely';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chargeUsage, recordUsage, refund } from '../../src/platform/billing.js';
import { Funding } from '../../src/portal/billing/service.js';
import { buildWebContext, screenshot, watchErrors, type WebContext } from '../helpers/browser.js';
import { addMember, portalOrg, portalUser, type PortalOrg, type PortalUser } from '../helpers/portal.js';

/**
 * Usage and billing as people see them: an owner of a funded organization reads the balance, the
 * usage chart and its table, the ledger (filtered, downloaded as CSV), announces a bank transfer
 * and gets the reference; the operator confirms it (here through the service the CLI calls); a
 * reload shows the new balance and the credit. A pending request is withdrawn. A viewer sees the
 * same figures without any Fund button. With VOUCH_SCREENSHOTS=1, screenshots land in docs/images/billing-*.
 */
const BANK = { bankName: 'Zenith Bank', accountName: 'Vouch Operations Ltd', accountNumber: '1012345678', note: 'Transfers after 4 pm are credited the next working day.' };

let web: WebContext;
let funded: PortalOrg;
beforeAll(async () => {
  web = await buildWebContext({ config: { bank: BANK } });
  const db = web.database.db;
  funded = await portalOrg(db, { fund: 5_000_000 });
  await db.updateTable('people').set({ name: 'Amaka Obi' }).where('id', '=', funded.owner.personId).execute();
  // A month of live use: lookups on a few days, an address verification, one refunded.
  const org = funded.org.id;
  const nin = { type: 'nin', defaultPrice: 5_000 };
  const bvn = { type: 'bvn_basic', defaultPrice: 2_500 };
  for (let i = 0; i < 6; i++) await chargeUsage(db, { orgId: org, mode: 'live', billable: i % 2 ? bvn : nin, subject: `223******0${i}` });
  await recordUsage(db, { orgId: org, mode: 'live', billable: nin, subject: '223******99' }, 'not_found');
  await chargeUsage(db, { orgId: org, mode: 'live', billable: { type: 'address', defaultPrice: 150_000 }, subject: 'reference LOAN-118' });
  await refund(db, org, 150_000, 'refund: address LOAN-118 cancelled');
  await chargeUsage(db, { orgId: org, mode: 'test', billable: nin, subject: '123******01' });
  // Spread the lookups over the last days, as real traffic would be.
  const events = await db.selectFrom('usage_events').select('id').where('org_id', '=', org).where('mode', '=', 'live').orderBy('id').execute();
  for (const [i, event] of events.entries()) {
    await sql`update usage_events set created_at = ${new Date(Date.now() - (i % 4) * 3 * 86_400_000)} where id = ${event.id}`.execute(db);
  }
}, 90_000);
afterAll(() => web?.close());

async function signedIn(user: PortalUser, options: { phone?: boolean; mode?: 'test' | 'live' } = {}) {
  const opened = await web.newPage({ phone: options.phone ?? false });
  const [name, value] = user.cookie.split('=') as [string, string];
  await opened.context.addCookies([{ name, value, url: web.baseUrl, httpOnly: true, sameSite: 'Lax' }]);
  if (options.mode) await opened.context.addInitScript((mode) => localStorage.setItem('vouch.mode', mode), options.mode);
  return opened;
}


/** Waits for what a person would wait for: a page under load can take seconds, not the poll's default one. */
const eventually = <T>(read: () => Promise<T> | T) => expect.poll(read, { timeout: 15_000 });

/** Console errors other than the browser's note of an expected 4xx answer. */
const unexpected = (errors: string[]) => errors.filter((e) => !/Failed to load resource: the server responded with a status of 4\d\d/.test(e));
const balanceCard = (page: Page) => page.getByRole('region', { name: 'Wallet balance' });

describe('usage and billing in a browser', () => {
  it('an owner sees the balance, usage chart and table, prices and the ledger; filters it and downloads the CSV', { timeout: 90_000 }, async () => {
    const { page, context } = await signedIn(funded.owner, { mode: 'live' });
    const errors = watchErrors(page);
    await page.goto('/billing');
    await eventually(() => balanceCard(page).getByText('₦49,775.00').isVisible()).toBe(true);
    // The chart is drawn (its own chunk) and said again in a table.
    await eventually(() => page.locator('.recharts-surface').first().isVisible()).toBe(true);
    const byType = page.getByRole('table', { name: /Checks by type/ });
    await eventually(() => byType.getByRole('row', { name: /NIN lookup 4 ₦150\.00/ }).isVisible()).toBe(true);
    await eventually(() => byType.getByRole('row', { name: /Address verification 1 ₦1,500\.00/ }).isVisible()).toBe(true);
    await eventually(() => page.getByText(/^8 checks from .*, ₦1,725\.00 charged\.$/).isVisible()).toBe(true);
    await eventually(() => page.getByRole('row', { name: /BVN lookup \(basic\) bvn_basic ₦25\.00/ }).isVisible()).toBe(true);

    const ledger = page.getByRole('table', { name: 'Ledger' });
    await eventually(() => ledger.getByRole('row').count()).toBe(10); // the header and nine entries
    await eventually(() => ledger.getByRole('row', { name: /Refund refund: address LOAN-118 cancelled \+₦1,500\.00 ₦49,775\.00/ }).isVisible()).toBe(true);
    await screenshot(page, 'billing');

    await page.getByText('Refunds', { exact: true }).click();
    await eventually(() => ledger.getByRole('row').count()).toBe(2);
    await page.getByText('All', { exact: true }).click();
    await eventually(() => ledger.getByRole('row').count()).toBe(10);

    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('link', { name: 'Download CSV' }).click()]);
    expect(download.suggestedFilename()).toMatch(/^vouch-ledger-start-to-\d{4}-\d\d-\d\d\.csv$/);
    const csv = await readFile((await download.path())!, 'utf8');
    const lines = csv.trim().split('\r\n');
    expect(lines[0]).toBe('id,created_at,date,kind,description,amount_naira,amount_kobo,balance_after_naira,balance_after_kobo');
    expect(lines).toHaveLength(10);
    expect(lines[1]).toMatch(/,credit,initial funding,50000\.00,5000000,50000\.00,5000000$/);

    await page.setViewportSize({ width: 390, height: 844 });
    await screenshot(page, 'billing-phone');
    expect(unexpected(errors)).toEqual([]);
    await context.close();
  });

  it('in test mode the page says test calls are never charged', { timeout: 60_000 }, async () => {
    const { page, context } = await signedIn(funded.owner, { mode: 'test' });
    await page.goto('/billing');
    await eventually(() => page.getByText('Test calls are free').isVisible()).toBe(true);
    // The wallet's balance is shown under it: the page no longer says test mode has no wallet.
    expect(await page.getByText('Test mode has no wallet').count()).toBe(0);
    await eventually(() => page.getByText('Wallet balance').isVisible()).toBe(true);
    await eventually(() => page.getByText(/^1 check from .*, none charged \(test mode\)\.$/).isVisible()).toBe(true);
    await context.close();
  });

  it('an owner announces a transfer, the operator confirms it, and the reload shows the credit; a pending one is withdrawn', { timeout: 90_000 }, async () => {
    const { page, context } = await signedIn(funded.owner, { mode: 'live' });
    const errors = watchErrors(page);
    await page.goto('/billing');
    await page.getByRole('link', { name: 'Fund wallet' }).first().click();
    await page.waitForURL('**/billing/fund');
    await eventually(() => page.getByRole('textbox', { name: 'Account number' }).inputValue()).toBe('1012345678');
    await eventually(() => page.getByText(BANK.note).isVisible()).toBe(true);
    await screenshot(page, 'billing-fund');

    // Too little: said at the field, nothing sent.
    await page.getByLabel(/^Amount \(naira\)/).fill('500');
    await page.getByRole('button', { name: 'Get the transfer reference' }).click();
    await eventually(() => page.getByText('Enter at least ₦1,000').isVisible()).toBe(true);

    await page.getByLabel(/^Amount \(naira\)/).fill('25000');
    await page.getByRole('button', { name: 'Get the transfer reference' }).click();
    await eventually(() => page.getByRole('heading', { name: 'Now make the transfer' }).isVisible()).toBe(true);
    await eventually(() => page.getByText(/We will credit your wallet when the transfer arrives/).isVisible()).toBe(true);
    const reference = await page.getByRole('textbox', { name: 'Reference (narration)' }).inputValue();
    expect(reference).toMatch(/^VCH-[A-HJ-NP-Z2-9]{6}$/);
    expect(await page.getByRole('textbox', { name: 'Amount', exact: true }).inputValue()).toBe('25000.00');
    const requests = page.getByRole('table', { name: 'Funding requests' });
    await eventually(() => requests.getByRole('row', { name: new RegExp(`${reference} ₦25,000\\.00 pending`) }).isVisible()).toBe(true);
    await screenshot(page, 'billing-fund-instructions');

    // The transfer arrives; the operator confirms it (vouch funding confirm calls the same service).
    const row = await web.database.db.selectFrom('funding_requests').select('id').where('reference', '=', reference).executeTakeFirstOrThrow();
    await new Funding(web.database.db).confirm(row.id, { kind: 'cli' });

    await page.goto('/billing');
    await eventually(() => balanceCard(page).getByText('₦74,775.00').isVisible()).toBe(true);
    const ledger = page.getByRole('table', { name: 'Ledger' });
    await eventually(() => ledger.getByRole('row', { name: new RegExp(`Funding Bank transfer ${reference} \\+₦25,000\\.00 ₦74,775\\.00`) }).isVisible()).toBe(true);

    // Announce another with a reference of our own, then withdraw it.
    await page.goto('/billing/fund');
    await page.getByLabel(/^Amount \(naira\)/).fill('1,000');
    await page.getByLabel(/^Your own reference/).fill('loan-batch-7');
    await page.getByRole('button', { name: 'Get the transfer reference' }).click();
    await eventually(() => page.getByRole('textbox', { name: 'Reference (narration)' }).inputValue().catch(() => '')).toBe('LOAN-BATCH-7');
    await eventually(() => requests.getByRole('row', { name: new RegExp(`${reference} ₦25,000\\.00 confirmed`) }).isVisible()).toBe(true);
    await page.getByRole('button', { name: 'Withdraw LOAN-BATCH-7' }).click();
    await page.getByRole('button', { name: 'Yes, withdraw' }).click();
    await eventually(() => requests.getByRole('row', { name: /LOAN-BATCH-7 ₦1,000\.00 withdrawn/ }).isVisible()).toBe(true);
    expect(await page.getByRole('button', { name: /^Withdraw / }).count()).toBe(0);

    // The same reference again while one stands is refused, at the reference field.
    await page.getByRole('button', { name: 'Announce another transfer' }).click();
    await page.getByLabel(/^Amount \(naira\)/).fill('2000');
    await page.getByLabel(/^Your own reference/).fill(reference);
    await page.getByRole('button', { name: 'Get the transfer reference' }).click();
    await eventually(() => page.getByText(`A transfer with the reference ${reference} is already announced`, { exact: false }).isVisible()).toBe(true);
    expect(unexpected(errors)).toEqual([]);
    await context.close();
  });

  it('a viewer sees the balance and the requests but no Fund button and no Withdraw', { timeout: 60_000 }, async () => {
    const viewer = await portalUser(web.database.db);
    await addMember(web.database.db, funded.org.id, viewer.personId, 'viewer');
    const { page, context } = await signedIn(viewer, { phone: true, mode: 'live' });
    const errors = watchErrors(page);
    await page.goto('/billing');
    await eventually(() => balanceCard(page).getByText(/^₦74,775\.00$/).isVisible()).toBe(true);
    await eventually(() => page.getByRole('table', { name: 'Ledger' }).isVisible()).toBe(true);
    expect(await page.getByRole('link', { name: 'Fund wallet' }).count()).toBe(0);
    await screenshot(page, 'billing-viewer-phone');

    await page.goto('/billing/fund');
    await eventually(() => page.getByText('Only owners and admins fund the wallet').isVisible()).toBe(true);
    await eventually(() => page.getByRole('table', { name: 'Funding requests' }).isVisible()).toBe(true);
    expect(await page.getByRole('button', { name: /^Withdraw/ }).count()).toBe(0);
    expect(await page.getByRole('button', { name: 'Get the transfer reference' }).count()).toBe(0);
    expect(unexpected(errors)).toEqual([]);
    await context.close();
  });
});
