import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer } from '../helpers/app.js';
import { buildWebContext, screenshot, watchErrors, type WebContext } from '../helpers/browser.js';
import { addMember, portalOrg, portalUser, type PortalOrg, type PortalUser } from '../helpers/portal.js';

/**
 * The verifications explorer as a customer uses it: a lookup made with the test secret shows
 * up masked; an address verification created from the form (after the form has shown the
 * server's field errors) is completed with the test helper and its page shows Verified with its
 * timeline, findings and webhook; another is cancelled from its page; a viewer can only look.
 * With VOUCH_SCREENSHOTS=1, screenshots of the pages land in docs/images/verifications-*.png.
 */
let web: WebContext;
let made: PortalOrg;

const TEST_BVN = '22345678901';

beforeAll(async () => {
  web = await buildWebContext();
  made = await portalOrg(web.database.db);
  await web.accounts.enable(made.org.id, 'LOW', 'FULL');
}, 90_000);
afterAll(async () => {
  await web?.close();
});

/** A browser context signed in as `user` (the session cookie the sign-in page would set). */
async function signedIn(user: PortalUser, phone = false): Promise<{ context: BrowserContext; page: Page }> {
  const opened = await web.newPage({ phone });
  const [name, value] = user.cookie.split('=') as [string, string];
  await opened.context.addCookies([{ name, value, url: web.baseUrl, httpOnly: true, sameSite: 'Lax' }]);
  return opened;
}


async function choose(page: Page, label: string, option: string): Promise<void> {
  // A required field's label ends with Mantine's asterisk.
  await page.getByLabel(new RegExp(`^${label}( \\*)?$`)).first().click();
  await page.getByRole('option', { name: option, exact: true }).click();
}

const v1 = (method: 'GET' | 'POST', url: string, payload?: object) =>
  web.app.inject({ method, url, headers: bearer(made.org.testSecret), ...(payload ? { payload } : {}) });

describe('the verifications explorer in a browser', () => {
  it('shows a test lookup masked, creates an address from the form, and shows it verified with its timeline', { timeout: 120_000 }, async () => {
    expect((await v1('POST', `/v1/verifications/identities/bvn/${TEST_BVN}`, { lastname: 'Okonkwo' })).statusCode).toBe(200);
    const { context, page } = await signedIn(made.owner);
    const errors = watchErrors(page);

    await page.goto('/verifications');
    const lookups = page.getByRole('table', { name: 'Identity lookups' });
    await expect.poll(() => lookups.getByRole('cell', { name: '223******01' }).isVisible(), { timeout: 15_000 }).toBe(true);
    expect(await lookups.getByRole('cell', { name: 'BVN', exact: true }).isVisible()).toBe(true);
    expect(await lookups.getByText('Found').isVisible()).toBe(true);
    expect(await page.content()).not.toContain(TEST_BVN);
    await page.getByLabel('Search').fill(TEST_BVN);
    await expect.poll(() => page.getByText('1–1 of 1').isVisible()).toBe(true);
    await page.getByLabel('Search').fill('999');
    await expect.poll(() => page.getByText('Nothing matches').isVisible()).toBe(true);
    await page.getByRole('button', { name: 'Clear the filters' }).click();
    await expect.poll(() => lookups.getByRole('cell', { name: '223******01' }).isVisible()).toBe(true);
    await screenshot(page, 'verifications-lookups');

    // An empty list says how to make the first one.
    await page.getByRole('tab', { name: 'Addresses' }).click();
    await expect.poll(() => page.getByText('No addresses in test mode yet').isVisible()).toBe(true);
    await screenshot(page, 'verifications-addresses-empty');

    // The form shows the server's messages next to the fields, and keeps what was typed.
    await page.getByRole('link', { name: 'New address verification' }).first().click();
    await expect.poll(() => page.getByRole('heading', { name: 'New address verification' }).isVisible()).toBe(true);
    await page.getByLabel('First name').fill('Adaeze');
    await page.getByLabel('Last name').fill('Okonkwo');
    await page.getByLabel('ID number (optional)').fill('1234');
    await page.getByRole('button', { name: 'Create verification' }).click();
    await expect.poll(() => page.getByText('street is required').isVisible()).toBe(true);
    expect(await page.getByText(/applicant.idNumber must be/).isVisible()).toBe(true);
    expect(await page.getByLabel('Street').getAttribute('aria-invalid')).toBe('true');
    expect(await page.getByLabel('First name').inputValue()).toBe('Adaeze');
    await screenshot(page, 'verifications-new-address-errors');

    await page.getByLabel('ID number (optional)').fill('12345678901');
    await page.getByLabel('Street').fill('12 Admiralty Way');
    await choose(page, 'State', 'Lagos');
    await choose(page, 'LGA', 'Eti-Osa');
    await page.getByLabel('Landmark (optional)').fill('Opposite the bank');
    await page.getByLabel('Your reference (optional)').fill('browser-address-1');
    await page.getByRole('button', { name: 'Create verification' }).click();
    await expect.poll(() => page.getByRole('heading', { name: 'Address verification browser-address-1' }).isVisible(), { timeout: 10_000 }).toBe(true);
    expect(await page.getByText('In progress').first().isVisible()).toBe(true);
    expect(await page.getByText('NIN 123******01').isVisible()).toBe(true);
    expect(await page.content()).not.toContain('12345678901');
    const id = Number(/\/verifications\/address\/(\d+)/.exec(page.url())?.[1]);
    expect(id).toBeGreaterThan(0);

    // The test helper completes it as an agent would; the page shows the outcome and how it got there.
    expect((await v1('POST', `/v1/test-helpers/addresses/${id}/complete`, { outcome: 'verified' })).statusCode).toBe(200);
    await page.reload();
    await expect.poll(() => page.getByText('Verified', { exact: true }).first().isVisible(), { timeout: 10_000 }).toBe(true);
    const timeline = page.getByRole('region', { name: 'Timeline' });
    for (const step of ['Created', 'Visit started', 'Completed']) expect(await timeline.getByText(step, { exact: true }).isVisible(), step).toBe(true);
    expect(await page.getByRole('region', { name: 'What the agent found' }).getByText('Test Neighbour').isVisible()).toBe(true);
    const map = page.getByRole('link', { name: 'Open in a map' });
    expect(await map.getAttribute('href')).toMatch(/^https:\/\/www\.openstreetmap\.org\/\?mlat=/);
    expect(await page.getByRole('table', { name: 'Webhook deliveries of this verification' }).getByText('address.completed').isVisible()).toBe(true);
    expect(await page.getByRole('button', { name: 'Cancel verification' }).count()).toBe(0);
    await screenshot(page, 'verifications-detail');

    // Back to the list: the row is there, verified; clicking it opens the page again.
    await page.getByRole('link', { name: /All address verifications/ }).click();
    const table = page.getByRole('table', { name: 'Addresses' });
    await expect.poll(() => table.getByRole('link', { name: 'browser-address-1' }).isVisible()).toBe(true);
    expect(await table.getByText('Verified').isVisible()).toBe(true);
    await screenshot(page, 'verifications-addresses');
    // The one failed load is the form's refused submit (400), which the page showed field by field.
    expect(errors).toEqual(['Failed to load resource: the server responded with a status of 400 (Bad Request)']);
    await context.close();
  });

  it('cancels an address verification from its page after asking', { timeout: 60_000 }, async () => {
    const created = await v1('POST', '/v1/verifications/addresses', { street: '4 Broad Street', lga: 'Lagos Island', state: 'Lagos', reference: 'to-cancel', applicant: { firstname: 'Chidi', lastname: 'Eze' } });
    const { id } = created.json().data as { id: number };
    const { context, page } = await signedIn(made.owner);
    await page.goto(`/verifications/address/${id}`);
    await page.getByRole('button', { name: 'Cancel verification' }).click();
    const dialog = page.getByRole('dialog', { name: 'Cancel this verification?' });
    await dialog.getByRole('button', { name: 'Yes, cancel it' }).click();
    await expect.poll(() => page.getByText('Cancelled', { exact: true }).first().isVisible(), { timeout: 10_000 }).toBe(true);
    await expect.poll(() => page.getByRole('button', { name: 'Cancel verification' }).count()).toBe(0);
    expect((await v1('GET', `/v1/verifications/addresses/${id}`)).json().data.status.status).toBe('Cancelled');
    await context.close();
  });

  it('works at phone width and shows the guarantor form', { timeout: 60_000 }, async () => {
    const { context, page } = await signedIn(made.owner, true);
    const errors = watchErrors(page);
    await page.goto('/verifications');
    await expect.poll(() => page.getByRole('cell', { name: '223******01' }).isVisible(), { timeout: 15_000 }).toBe(true);
    await screenshot(page, 'verifications-lookups-phone');
    const row = await web.database.db.selectFrom('address_verifications').select('id').where('reference', '=', 'browser-address-1').executeTakeFirstOrThrow();
    await page.goto(`/verifications/address/${row.id}`);
    await expect.poll(() => page.getByRole('heading', { name: 'Address verification browser-address-1' }).isVisible(), { timeout: 10_000 }).toBe(true);
    expect(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth + 1)).toBe(true);
    await screenshot(page, 'verifications-detail-phone');
    await page.goto('/verifications/new/guarantor');
    await expect.poll(() => page.getByLabel('Guarantor’s email').isVisible(), { timeout: 10_000 }).toBe(true);
    expect(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth + 1)).toBe(true);
    await screenshot(page, 'verifications-new-guarantor-phone');
    expect(errors).toEqual([]);
    await context.close();
  });

  it('creates a guarantor verification from the form', { timeout: 60_000 }, async () => {
    const { context, page } = await signedIn(made.owner);
    await page.goto('/verifications/new/guarantor');
    await page.getByLabel('Guarantor’s first name').fill('Babatunde');
    await page.getByLabel('Guarantor’s last name').fill('Adeyemi');
    await page.getByLabel('Guarantor’s email').fill('babatunde@example.com');
    await page.getByLabel('Applicant’s first name').fill('Adaeze');
    await page.getByLabel('Applicant’s last name').fill('Okonkwo');
    await page.getByLabel('Applicant’s ID number').fill(TEST_BVN);
    await screenshot(page, 'verifications-new-guarantor');
    await page.getByRole('button', { name: 'Create verification' }).click();
    await expect.poll(() => page.getByRole('heading', { name: /^Guarantor verification gua_/ }).isVisible(), { timeout: 10_000 }).toBe(true);
    expect(await page.getByRole('region', { name: 'Timeline' }).getByText('Request sent').isVisible()).toBe(true);
    expect(await page.content()).not.toContain(TEST_BVN);
    await context.close();
  });

  it('lets a viewer look but not create or cancel', { timeout: 60_000 }, async () => {
    const viewer = await portalUser(web.database.db);
    await addMember(web.database.db, made.org.id, viewer.personId, 'viewer');
    const open = (await v1('POST', '/v1/verifications/addresses', { street: '1 Marina', lga: 'Lagos Island', state: 'Lagos', applicant: { firstname: 'Ngozi', lastname: 'Eze' } })).json().data as { id: number };
    const { context, page } = await signedIn(viewer);
    await page.goto('/verifications?tab=address');
    await expect.poll(() => page.getByRole('table', { name: 'Addresses' }).isVisible(), { timeout: 15_000 }).toBe(true);
    expect(await page.getByRole('link', { name: 'New address verification' }).count()).toBe(0);
    await page.goto(`/verifications/address/${open.id}`);
    await expect.poll(() => page.getByText('In progress').first().isVisible(), { timeout: 10_000 }).toBe(true);
    expect(await page.getByRole('button', { name: 'Cancel verification' }).count()).toBe(0);
    await context.close();
  });
});
