import { sql } from 'kysely';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildWebContext, screenshot, watchErrors, type WebContext } from '../helpers/browser.js';
import { portalOrg, type PortalOrg, type PortalUser } from '../helpers/portal.js';

/**
 * The portal's create forms and an organization that requires consent (the operator's
 * setting): the consent fields are marked required and say why, a verification without consent
 * is refused with the server's message at the field, one with it is created and its consent is
 * stored (encrypted at rest). Where consent is optional the fields say so.
 */
let web: WebContext;
let strict: PortalOrg;
let relaxed: PortalOrg;

beforeAll(async () => {
  web = await buildWebContext();
  strict = await portalOrg(web.database.db);
  relaxed = await portalOrg(web.database.db);
  await web.accounts.enable(strict.org.id, 'LOW', 'FULL');
  await web.accounts.enable(relaxed.org.id, 'LOW', 'FULL');
  await web.database.db.updateTable('organizations').set({ consent_required: true }).where('id', '=', strict.org.id).execute();
}, 90_000);
afterAll(async () => {
  await web?.close();
});

async function signedIn(user: PortalUser): Promise<{ context: BrowserContext; page: Page }> {
  const opened = await web.newPage();
  const [name, value] = user.cookie.split('=') as [string, string];
  await opened.context.addCookies([{ name, value, url: web.baseUrl, httpOnly: true, sameSite: 'Lax' }]);
  return opened;
}

/** A field by its label, with or without Mantine's required asterisk. */
const field = (page: Page, label: string) => page.getByLabel(new RegExp(`^${label}( \\*)?$`)).first();

async function choose(page: Page, label: string, option: string): Promise<void> {
  await field(page, label).click();
  await page.getByRole('option', { name: option, exact: true }).click();
}

describe('consent on the portal create forms', () => {
  it('requires consent where the organization does: refused at the field without it, created and stored with it', { timeout: 120_000 }, async () => {
    const { context, page } = await signedIn(strict.owner);
    const errors = watchErrors(page);
    await page.goto('/verifications/new/address');
    await expect.poll(() => page.getByRole('heading', { name: 'New address verification' }).isVisible(), { timeout: 15_000 }).toBe(true);

    // Marked required, with the reason.
    await expect.poll(() => page.getByText('Your organization requires a record of the person’s consent').isVisible()).toBe(true);
    for (const label of ['Consent reference', 'Consent obtained at', 'Consent channel']) {
      expect(await field(page, label).getAttribute('required'), label).not.toBeNull();
    }
    expect(await page.getByLabel(/Consent reference \(optional\)/).count()).toBe(0);

    await field(page, 'First name').fill('Adaeze');
    await field(page, 'Last name').fill('Okonkwo');
    await field(page, 'Street').fill('12 Admiralty Way');
    await choose(page, 'State', 'Lagos');
    await choose(page, 'LGA', 'Eti-Osa');
    await page.getByLabel('Your reference (optional)').fill('consent-address-1');

    // Without consent: the server's refusal shows at the consent reference.
    await page.getByRole('button', { name: 'Create verification' }).click();
    await expect.poll(() => page.getByText('Your organization requires consent: fill in the reference').isVisible(), { timeout: 10_000 }).toBe(true);
    expect(await field(page, 'Consent reference').getAttribute('aria-invalid')).toBe('true');
    expect(await page.getByRole('alert').filter({ hasText: 'Not created' }).count()).toBe(0);
    await screenshot(page, 'verifications-consent-required');

    // Half filled: the server names the missing part, at its field.
    await field(page, 'Consent reference').fill('FORM-2024-0042');
    await choose(page, 'Consent channel', 'In person');
    await page.getByRole('button', { name: 'Create verification' }).click();
    await expect.poll(() => page.getByText('consent.obtainedAt is required').isVisible(), { timeout: 10_000 }).toBe(true);
    expect(await field(page, 'Consent obtained at').getAttribute('aria-invalid')).toBe('true');
    expect(await field(page, 'Consent reference').getAttribute('aria-invalid')).not.toBe('true');

    // In the future: refused at the field too.
    await field(page, 'Consent obtained at').fill('2099-01-01T10:00');
    await page.getByRole('button', { name: 'Create verification' }).click();
    await expect.poll(() => page.getByText('consent.obtainedAt must not be in the future').isVisible(), { timeout: 10_000 }).toBe(true);
    expect(await web.database.db.selectFrom('address_verifications').select('id').where('org_id', '=', strict.org.id).execute()).toEqual([]);

    // Complete: created, and the consent kept as given (the browser's local time, as UTC).
    await field(page, 'Consent obtained at').fill('2024-05-01T09:30');
    const expectedAt = await page.evaluate(() => new Date('2024-05-01T09:30').toISOString());
    await page.getByRole('button', { name: 'Create verification' }).click();
    await expect.poll(() => page.getByRole('heading', { name: 'Address verification consent-address-1' }).isVisible(), { timeout: 10_000 }).toBe(true);
    const id = Number(/\/verifications\/address\/(\d+)/.exec(page.url())?.[1]);
    expect(id).toBeGreaterThan(0);

    const row = await web.database.db
      .selectFrom('address_verifications')
      .select(['org_id', 'consent_reference', 'consent_obtained_at', 'consent_channel'])
      .where('id', '=', id)
      .executeTakeFirstOrThrow();
    expect(row).toMatchObject({ org_id: strict.org.id, consent_reference: 'FORM-2024-0042', consent_channel: 'in_person' });
    expect(new Date(row.consent_obtained_at!).toISOString()).toBe(expectedAt);
    const { rows: raw } = await sql<{ consent_reference: string }>`select consent_reference from address_verifications where id = ${id}`.execute(web.database.db.withoutPlugins());
    expect(raw[0]!.consent_reference).not.toContain('FORM-2024-0042');

    // The three refusals, and nothing else.
    expect(errors).toEqual(Array(3).fill('Failed to load resource: the server responded with a status of 400 (Bad Request)'));
    await context.close();
  });

  it('shows the consent fields as optional where it is not required, and sends none when they are empty', { timeout: 120_000 }, async () => {
    const { context, page } = await signedIn(relaxed.owner);
    const errors = watchErrors(page);
    await page.goto('/verifications/new/guarantor');
    await expect.poll(() => page.getByRole('heading', { name: 'New guarantor verification' }).isVisible(), { timeout: 15_000 }).toBe(true);
    for (const label of ['Consent reference (optional)', 'Consent obtained at (optional)', 'Consent channel (optional)']) {
      expect(await page.getByLabel(label, { exact: true }).first().getAttribute('required'), label).toBeNull();
    }
    expect(await page.getByText('Your organization requires').count()).toBe(0);

    await field(page, 'Guarantor’s first name').fill('Emeka');
    await field(page, 'Guarantor’s last name').fill('Obi');
    await field(page, 'Guarantor’s email').fill('emeka@example.com');
    await field(page, 'Applicant’s first name').fill('Adaeze');
    await field(page, 'Applicant’s last name').fill('Okonkwo');
    await field(page, 'Applicant’s date of birth').fill('14-03-1990');
    await field(page, 'Applicant’s ID number').fill('22345678901');
    await page.getByLabel('Your reference (optional)').fill('consent-guarantor-1');
    await page.getByRole('button', { name: 'Create verification' }).click();
    await expect.poll(() => page.getByRole('heading', { name: 'Guarantor verification consent-guarantor-1' }).isVisible(), { timeout: 10_000 }).toBe(true);
    const id = Number(/\/verifications\/guarantor\/(\d+)/.exec(page.url())?.[1]);
    const row = await web.database.db.selectFrom('guarantor_verifications').select(['consent_reference', 'consent_channel']).where('id', '=', id).executeTakeFirstOrThrow();
    expect(row).toEqual({ consent_reference: null, consent_channel: null });
    expect(errors).toEqual([]);
    await context.close();
  });
});
