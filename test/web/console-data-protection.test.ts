import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer } from '../helpers/app.js';
import { buildWebContext, watchErrors, type WebContext } from '../helpers/browser.js';
import { operatorUser, portal, type PortalUser } from '../helpers/portal.js';

/**
 * The console's data protection pages as an operator uses them: an organization's retention
 * periods and consent setting (saved, audited, and a bad period shown at its field), and the
 * access log filtered to the API, showing a verification the organization's secret read.
 */
let web: WebContext;
let operator: PortalUser;

beforeAll(async () => {
  web = await buildWebContext();
  operator = await operatorUser(web.app, web.database.db, { origin: web.baseUrl });
}, 90_000);
afterAll(() => web?.close());

const eventually = <T>(check: () => Promise<T>, timeout = 15_000) => expect.poll(check, { timeout });
/** Console errors other than the browser's note of an expected 4xx answer. */
const unexpected = (errors: string[]) => errors.filter((e) => !/Failed to load resource: the server responded with a status of 4\d\d/.test(e));

async function signedIn(user: PortalUser, phone = false): Promise<Page> {
  const [name, value] = user.cookie.split('=') as [string, string];
  const { context, page } = await web.newPage({ phone });
  await context.addCookies([{ name, value, url: web.baseUrl }]);
  return page;
}

const ADDRESS_BODY = {
  street: '12 Adeola Odeku Street',
  lga: 'Eti-Osa',
  state: 'Lagos',
  applicant: { firstname: 'Adaeze', lastname: 'Okonkwo', phone: '08031234567' },
};

describe('the console data protection pages', () => {
  it('an operator sets photo retention and required consent, then finds an API view in the access log', { timeout: 150_000 }, async () => {
    const org = await web.org({ name: 'Yaba Microfinance', riskLevel: 'LOW' });
    const other = await web.org({ name: 'Ojota Loans', riskLevel: 'LOW' });

    const page = await signedIn(operator);
    const errors = watchErrors(page);
    await page.goto(`/console/organizations/${org.id}`);
    const section = page.getByRole('region', { name: 'Data protection' });
    await eventually(() => section.getByTestId('retention-photoDays').textContent()).toMatch(/days default$/);
    // The consent setting loads on its own request, after or before the retention periods.
    await eventually(() => section.getByText('Saved: consent optional').isVisible()).toBe(true);

    // Retention: a period out of range is refused by the server and shown at its field; 180 days saves.
    await section.getByRole('button', { name: 'Edit retention periods' }).click();
    const dialog = page.getByRole('dialog', { name: 'Retention periods of Yaba Microfinance' });
    await dialog.getByRole('checkbox', { name: /Use the default for photos/ }).uncheck();
    await dialog.getByLabel('Photos (days)').fill('5000');
    await dialog.getByRole('button', { name: 'Save' }).click();
    await eventually(() => dialog.getByText(/Photos must be a whole number of days from 1 to 3650/).isVisible()).toBe(true);
    expect(await dialog.getByLabel('Photos (days)').getAttribute('aria-invalid')).toBe('true');
    await dialog.getByLabel('Photos (days)').fill('180');
    await dialog.getByRole('button', { name: 'Save' }).click();
    await eventually(() => dialog.isVisible()).toBe(false);
    await eventually(() => section.getByTestId('retention-photoDays').textContent()).toBe('180 days set for this organization');
    expect(await section.getByTestId('retention-lookupDays').textContent()).toMatch(/default$/);

    // Consent: required.
    await section.getByRole('radio', { name: 'Required' }).check();
    await section.getByRole('button', { name: 'Save consent setting' }).click();
    await eventually(() => section.getByText('Saved: consent required').isVisible()).toBe(true);

    // The database and the API agree, and both changes are audited with the operator.
    const settings = await web.database.db.selectFrom('retention_settings').selectAll().where('org_id', '=', org.id).executeTakeFirstOrThrow();
    expect(settings).toMatchObject({ photo_days: 180, lookup_days: null, verification_days: null, webhook_days: null });
    const retention = await portal(web.app, operator, { method: 'GET', url: `/api/console/organizations/${org.id}/retention` });
    expect(retention.json()).toMatchObject({ photoDays: 180, custom: { photoDays: true, lookupDays: false } });
    const consent = await portal(web.app, operator, { method: 'GET', url: `/api/console/organizations/${org.id}/consent` });
    expect(consent.json()).toEqual({ orgId: org.id, consentRequired: true });
    const audited = await web.database.db.selectFrom('audit_events').select(['action', 'actor_kind', 'actor_id']).where('org_id', '=', org.id).orderBy('id').execute();
    expect(audited).toEqual([
      { action: 'organization.retention_changed', actor_kind: 'operator', actor_id: operator.personId },
      { action: 'consent.setting_changed', actor_kind: 'operator', actor_id: operator.personId },
    ]);

    // Consent is now required: without it the API refuses; with it, a verification is made and read.
    const refused = await web.app.inject({ method: 'POST', url: '/v1/verifications/addresses', headers: bearer(org.testSecret), payload: ADDRESS_BODY });
    expect(refused.statusCode).toBe(400);
    const created = await web.app.inject({
      method: 'POST',
      url: '/v1/verifications/addresses',
      headers: bearer(org.testSecret),
      payload: { ...ADDRESS_BODY, consent: { reference: 'FORM-2026-0007', obtainedAt: '2026-01-05T09:30:00Z', channel: 'web' } },
    });
    expect(created.statusCode, created.body).toBe(201);
    const id = created.json().data.id as number;
    expect((await web.app.inject({ method: 'GET', url: `/v1/verifications/addresses/${id}`, headers: bearer(org.testSecret) })).statusCode).toBe(200);
    // Another organization's view, and a portal-channel one, to filter out.
    const theirs = await web.app.inject({ method: 'POST', url: '/v1/verifications/addresses', headers: bearer(other.testSecret), payload: ADDRESS_BODY });
    expect(theirs.statusCode, theirs.body).toBe(201);
    expect((await web.app.inject({ method: 'GET', url: `/v1/verifications/addresses/${theirs.json().data.id}`, headers: bearer(other.testSecret) })).statusCode).toBe(200);

    await page.getByRole('link', { name: 'Access log' }).click();
    await page.waitForURL('**/console/access-log');
    const table = page.getByRole('table', { name: 'Access log' });
    await eventually(() => table.getByText('Ojota Loans').first().isVisible()).toBe(true);
    await page.getByRole('combobox', { name: 'Channel' }).click();
    await page.getByRole('option', { name: 'API', exact: true }).click();
    await page.getByRole('combobox', { name: 'Organization' }).fill('Yaba');
    await page.getByRole('option', { name: 'Yaba Microfinance' }).click();
    await eventually(() => table.getByText('Ojota Loans').count()).toBe(0);
    const row = table.getByRole('row', { name: new RegExp(`address #${id}`) });
    await eventually(() => row.count()).toBe(1);
    expect(await row.getByText('API secret').isVisible()).toBe(true);
    expect(await row.getByText('Viewed').isVisible()).toBe(true);
    expect(await row.getByText('Yaba Microfinance').isVisible()).toBe(true);
    // A channel with no rows for it says so.
    await page.getByRole('combobox', { name: 'Channel' }).click();
    await page.getByRole('option', { name: 'Command line', exact: true }).click();
    await eventually(() => page.getByText('No access matches').isVisible()).toBe(true);
    expect(unexpected(errors)).toEqual([]);
  });

  it('the access log works at phone width', { timeout: 90_000 }, async () => {
    // A view of its own to list, whatever ran before (the table shows once there is a row).
    const org = await web.org({ name: 'Ikeja Credit', riskLevel: 'LOW' });
    const created = await web.app.inject({ method: 'POST', url: '/v1/verifications/addresses', headers: bearer(org.testSecret), payload: ADDRESS_BODY });
    expect(created.statusCode, created.body).toBe(201);
    expect((await web.app.inject({ method: 'GET', url: `/v1/verifications/addresses/${created.json().data.id}`, headers: bearer(org.testSecret) })).statusCode).toBe(200);
    // A list page of two records is one access: the log shows it as a line per record.
    const second = await web.app.inject({ method: 'POST', url: '/v1/verifications/addresses', headers: bearer(org.testSecret), payload: ADDRESS_BODY });
    expect(second.statusCode, second.body).toBe(201);
    expect((await web.app.inject({ method: 'GET', url: '/v1/verifications/addresses', headers: bearer(org.testSecret) })).statusCode).toBe(200);
    const page = await signedIn(operator, true);
    const errors = watchErrors(page);
    await page.setViewportSize({ width: 375, height: 812 });
    await page.goto('/console');
    await page.getByRole('button', { name: 'Open navigation' }).click();
    await page.getByRole('link', { name: 'Access log' }).click();
    await page.waitForURL('**/console/access-log');
    const table = page.getByRole('table', { name: 'Access log' });
    await eventually(() => table.isVisible()).toBe(true);
    for (const id of [created.json().data.id, second.json().data.id]) {
      await eventually(() => table.getByRole('row', { name: new RegExp(`Listed.*address #${id}\\b`) }).count()).toBe(1);
    }
    if (process.env.VOUCH_SCREENSHOTS) await page.screenshot({ path: 'docs/images/console-access-log-phone.png', fullPage: true });
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    expect(overflow).toBeLessThanOrEqual(0);
    expect(unexpected(errors)).toEqual([]);
  });
});
