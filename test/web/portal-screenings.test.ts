import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, NOWHERE_WEBHOOK_URL } from '../helpers/app.js';
import { buildWebContext, screenshot, watchErrors, type WebContext } from '../helpers/browser.js';
import { addMember, portal, portalUser, type PortalUser } from '../helpers/portal.js';
import { noOverflow } from './verify-helpers.js';

/**
 * The portal's Screenings area in Chromium at phone width, on screenings of the sandbox list made
 * through the API: the list and its status filter, the monitored subjects, a screening's page with
 * each hit beside the subject, a false positive refused without a note then cleared with one, a
 * true match confirmed (final), a review the server refuses shown as an error, the NFIU export
 * link, and the organization's screening switches (an owner changes them, a viewer cannot).
 * With VOUCH_SCREENSHOTS=1: docs/images/portal-screenings.png and portal-screening.png.
 */
let web: WebContext;
let orgId: string;
let owner: PortalUser;
let viewer: PortalUser;
let testSecret: string;
let twoHits: Screening;
let clear: Screening;
let oneHit: Screening;

interface Screening {
  id: number;
  hits: { id: number; entityId: string; name: string }[];
}

async function screen(body: object): Promise<Screening> {
  const res = await web.app.inject({ method: 'POST', url: '/v1/verifications/screenings', headers: bearer(testSecret), payload: body });
  if (res.statusCode !== 201) throw new Error(`screening answered ${res.statusCode}: ${res.body}`);
  return res.json().data as Screening;
}

beforeAll(async () => {
  web = await buildWebContext({ webhookUrl: NOWHERE_WEBHOOK_URL });
  const org = await web.org({ name: 'Kolo Microfinance' });
  orgId = org.id;
  testSecret = org.testSecret;
  owner = await portalUser(web.database.db);
  await addMember(web.database.db, org.id, owner.personId, 'owner');
  viewer = await portalUser(web.database.db);
  await addMember(web.database.db, org.id, viewer.personId, 'viewer');
  // The sandbox's sanctioned person by name and its PEP by alias: two hits, monitored.
  twoHits = await screen({ subject: { type: 'person', name: 'Musa Adamu Karfe', dob: '1968-04-12', nationality: 'NG', aliases: ['Folasade Adeyinka-Bright'] }, reference: 'acct-1001', monitor: true });
  clear = await screen({ subject: { type: 'person', name: 'Chinedu Okafor' }, reference: 'acct-1002' });
  oneHit = await screen({ subject: { type: 'person', name: 'Babajide Olumide Farinre' }, reference: 'acct-1003' });
}, 120_000);
afterAll(async () => {
  await web?.close();
});

async function signedIn(user: PortalUser): Promise<Page> {
  const { context, page } = await web.newPage({ phone: true });
  const [name, value] = user.cookie.split('=') as [string, string];
  await context.addCookies([{ name, value, url: web.baseUrl, httpOnly: true, sameSite: 'Lax' }]);
  return page;
}

const eventually = <T>(check: () => Promise<T>, timeout = 15_000) => expect.poll(check, { timeout });
/** Console errors other than the browser's note of an expected 4xx answer. */
const unexpected = (errors: string[]) => errors.filter((e) => !/Failed to load resource: the server responded with a status of 4\d\d/.test(e));
const rowNames = (page: Page, table: string) => page.getByRole('table', { name: table }).getByRole('link').allTextContents();

describe('the Screenings area of the portal (phone width)', () => {
  it('lists screenings, filters them by status, and shows the monitored subjects', { timeout: 120_000 }, async () => {
    expect(twoHits.hits.map((hit) => hit.entityId).sort()).toEqual(['SBX-P-001', 'SBX-P-002']);
    expect(clear.hits).toEqual([]);
    const page = await signedIn(owner);
    const errors = watchErrors(page);
    await page.goto('/');
    await page.getByRole('button', { name: 'Open navigation' }).click();
    await page.getByRole('link', { name: 'Screenings' }).click();
    await page.getByRole('heading', { name: 'Screenings', level: 1 }).waitFor();
    await eventually(() => rowNames(page, 'Screenings')).toEqual(['Babajide Olumide Farinre', 'Chinedu Okafor', 'Musa Adamu Karfe']);
    const musaRow = page.getByRole('table', { name: 'Screenings' }).getByRole('row').filter({ hasText: 'Musa Adamu Karfe' });
    await musaRow.getByText('Monitored').waitFor();
    await musaRow.getByText('Pending review').waitFor();

    const status = page.getByLabel('Status');
    await status.selectOption('clear');
    await eventually(() => rowNames(page, 'Screenings')).toEqual(['Chinedu Okafor']);
    await status.selectOption('pending_review');
    await eventually(() => rowNames(page, 'Screenings')).toEqual(['Babajide Olumide Farinre', 'Musa Adamu Karfe']);
    await status.selectOption('confirmed_match');
    await page.getByText('No test-mode screening is confirmed match.').waitFor();
    await page.getByRole('button', { name: 'Show all statuses' }).click();
    await eventually(() => rowNames(page, 'Screenings')).toHaveLength(3);

    await page.getByRole('tab', { name: 'Monitored subjects' }).click();
    await eventually(() => rowNames(page, 'Monitored subjects')).toEqual(['Musa Adamu Karfe']);
    await noOverflow(page);
    await page.getByRole('tab', { name: 'All screenings' }).click();
    await eventually(() => rowNames(page, 'Screenings')).toHaveLength(3);
    await screenshot(page, 'portal-screenings');
    expect(unexpected(errors)).toEqual([]);
  });

  it('a screening’s page: each hit beside the subject; a false positive needs a note; a true match is final', { timeout: 120_000 }, async () => {
    const page = await signedIn(owner);
    const errors = watchErrors(page);
    await page.goto('/screenings');
    await page.getByRole('table', { name: 'Screenings' }).getByRole('link', { name: 'Musa Adamu Karfe' }).click();
    await page.getByRole('heading', { name: 'Screening of Musa Adamu Karfe', level: 1 }).waitFor();
    await page.getByRole('heading', { name: '2 hits, 2 waiting for review' }).waitFor();
    await page.getByText('Reference acct-1001', { exact: false }).waitFor();

    const sanctioned = page.getByRole('region', { name: 'Musa Adamu Karfe' });
    const pep = page.getByRole('region', { name: 'Folasade Temitope Adeyinka-Bright' });
    const side = sanctioned.getByRole('table', { name: 'The subject beside list entry SBX-P-001' });
    const dob = side.getByRole('row', { name: /Date of birth/ });
    expect(await dob.getByRole('cell').allTextContents()).toEqual(['1968-04-12', '1968-04-12']);
    await side.getByRole('row', { name: /Nationality/ }).getByRole('cell', { name: 'NG' }).first().waitFor();
    for (const text of ['SBX-P-001', 'sandbox, version 1', 'SANDBOX-TERRORISM', 'sanction']) await sanctioned.getByText(text, { exact: true }).first().waitFor();
    await sanctioned.getByText('Why it matched').waitFor();
    expect((await sanctioned.getByText(/^Score \d+ %$/).textContent())!.length).toBeGreaterThan(0);
    // The PEP matched through the subject's alias; the entry's own name heads it.
    await pep.getByRole('table', { name: 'The subject beside list entry SBX-P-002' }).getByRole('cell', { name: /matched: Folasade Adeyinka-Bright/ }).waitFor();
    await noOverflow(page);

    // Cleared without a note: refused at the field before the server is asked.
    await pep.getByRole('button', { name: 'False positive' }).click();
    await pep.getByText('Say why this is not the subject: a note is required to clear a hit').waitFor();
    await pep.getByLabel('Review note for Folasade Temitope Adeyinka-Bright').fill('Different person: born 1985 per the passport seen at onboarding');
    await pep.getByRole('button', { name: 'False positive' }).click();
    await pep.getByRole('status').filter({ hasText: 'Cleared as a false positive' }).waitFor();
    await pep.getByText('Note: Different person: born 1985 per the passport seen at onboarding').waitFor();
    await page.getByRole('heading', { name: '2 hits, 1 waiting for review' }).waitFor();

    await sanctioned.getByLabel('Review note for Musa Adamu Karfe').fill('Same name, date of birth and nationality as the UN entry');
    await sanctioned.getByRole('button', { name: 'True match' }).click();
    await sanctioned.getByRole('status').filter({ hasText: 'Confirmed a true match: final' }).waitFor();
    expect(await sanctioned.getByRole('button').count()).toBe(0);
    await page.getByRole('note').filter({ hasText: 'Confirmed match' }).waitFor();
    await screenshot(page, 'portal-screening');

    const hits = await web.database.db.selectFrom('screening_hits').select(['entity_id', 'decision']).where('screening_id', '=', twoHits.id).orderBy('entity_id').execute();
    expect(hits).toEqual([
      { entity_id: 'SBX-P-001', decision: 'true_match' },
      { entity_id: 'SBX-P-002', decision: 'false_positive' },
    ]);
    expect(unexpected(errors)).toEqual([]);
  });

  it('a review the server refuses is shown as an error on the hit', { timeout: 60_000 }, async () => {
    const page = await signedIn(owner);
    await page.goto(`/screenings/${oneHit.id}`);
    const hit = page.getByRole('region', { name: oneHit.hits[0]!.name });
    await hit.getByRole('button', { name: 'True match' }).waitFor();
    // Meanwhile a colleague confirms it: this page still offers the buttons.
    const other = await portal(web.app, owner, { method: 'POST', url: `/api/orgs/${orgId}/screenings/${oneHit.id}/hits/${oneHit.hits[0]!.id}/review?mode=test`, headers: { origin: web.baseUrl }, payload: { decision: 'true_match', note: 'Confirmed by the MLRO' } });
    expect(other.statusCode).toBe(200);
    await hit.getByLabel(`Review note for ${oneHit.hits[0]!.name}`).fill('Not him');
    await hit.getByRole('button', { name: 'False positive' }).click();
    const alert = hit.getByRole('alert').filter({ hasText: 'The review was not saved' });
    await alert.waitFor();
    expect(await alert.textContent()).toMatch(/true match|final|already/i);
  });

  it('the export link downloads the confirmed matches as CSV for the chosen days', { timeout: 60_000 }, async () => {
    const page = await signedIn(owner);
    await page.goto('/screenings');
    const exportSection = page.getByRole('region', { name: 'Export confirmed matches' });
    const today = new Date().toISOString().slice(0, 10);
    // Days are written day first, as in Nigeria (DD/MM/YYYY); a day that does not exist is refused in words.
    await exportSection.getByLabel('Confirmed from').fill('31/02/2020');
    await exportSection.getByText('Write the day as DD/MM/YYYY, for example 07/12/2026').waitFor();
    await exportSection.getByLabel('Confirmed from').fill('01/01/2020');
    await exportSection.getByLabel('Confirmed to').fill(today.split('-').reverse().join('/'));
    const link = exportSection.getByRole('link', { name: 'Download the CSV' });
    const href = await link.getAttribute('href');
    expect(href).toBe(`/api/orgs/${orgId}/screenings/export.csv?mode=test&from=2020-01-01&to=${today}`);
    const csv = await page.request.get(href!);
    expect(csv.status()).toBe(200);
    const lines = (await csv.text()).trim().split(/\r?\n/);
    expect(lines[0]).toMatch(/^screening_id,reference,subject_type,subject_name/);
    expect(lines.slice(1).map((line) => line.split(',')[6]).sort()).toEqual(['SBX-P-001', 'SBX-P-004']);
    // A range that ends before it starts offers no link.
    await exportSection.getByLabel('Confirmed to').fill('31/12/2019');
    await exportSection.getByText('Pick a day on or after the first').waitFor();
    expect(await exportSection.getByRole('link', { name: 'Download the CSV' }).count()).toBe(0);
  });

  it('an owner turns screening of sessions, lookups and business verifications on; a viewer sees the switches and cannot change them', { timeout: 60_000 }, async () => {
    const page = await signedIn(owner);
    await page.goto('/screenings');
    const sessions = page.getByRole('switch', { name: 'Screen the person of every verification session' });
    const lookups = page.getByRole('switch', { name: 'Screen the person or company of every identity lookup' });
    const businesses = page.getByRole('switch', { name: 'Screen the company of every business verification' });
    await eventually(() => sessions.isEnabled()).toBe(true);
    expect([await sessions.isChecked(), await lookups.isChecked(), await businesses.isChecked()]).toEqual([false, false, false]);
    await sessions.click({ force: true });
    await page.getByText('Saved: new sessions, lookups and business verifications follow it.').waitFor();
    await eventually(() => sessions.isChecked()).toBe(true);
    const stored = () => web.database.db.selectFrom('organization_screening').select(['sessions', 'lookups', 'businesses']).where('org_id', '=', orgId).executeTakeFirst();
    expect(await stored()).toEqual({ sessions: true, lookups: false, businesses: false });
    await lookups.click({ force: true });
    await eventually(stored).toEqual({ sessions: true, lookups: true, businesses: false });
    await businesses.click({ force: true });
    await eventually(stored).toEqual({ sessions: true, lookups: true, businesses: true });

    const seen = await signedIn(viewer);
    await seen.goto('/screenings');
    const viewerSwitch = seen.getByRole('switch', { name: 'Screen the company of every business verification' });
    await eventually(() => viewerSwitch.isChecked()).toBe(true);
    expect(await viewerSwitch.isDisabled()).toBe(true);
    await seen.getByText('Your role (viewer) can see this setting; an owner or admin changes it.').waitFor();
    // The viewer reads a screening but is offered no review.
    await seen.goto(`/screenings/${clear.id}`);
    await seen.getByRole('heading', { name: 'Screening of Chinedu Okafor', level: 1 }).waitFor();
    await seen.getByText('No list entry scored at or above the threshold: nothing to review.').waitFor();
  });
});
