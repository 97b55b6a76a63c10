import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_IDENTITY_KEYS } from '../../src/identities/registry/test-identities.js';
import { reasonText } from '../../web/verify/src/words.js';
import { buildWebContext, screenshot, watchErrors, type WebContext } from '../helpers/browser.js';
import {
  BROWSER_LIVENESS_LIMITS,
  cameraVideo,
  consentAndId,
  createSession,
  customerSite,
  fetchSession,
  importLivePerson,
  launchWithCamera,
  LIVE_PERSON,
  noOverflow,
  phoneContext,
  takeSelfie,
  type CustomerSite,
} from './verify-helpers.js';

/**
 * The hosted flow in Chromium at phone width, on a real server over a real socket: from the
 * session's link to the redirect, with Chromium's fake camera playing recorded sequences
 * (test/fixtures/liveness), and a still photo failing liveness. The server's real liveness engine
 * and face match decide. (The handoff is in verify-handoff.test.ts: its phone plays the same
 * recording, whose frames the server would rightly refuse as replayed within one database.)
 */

const FLOW_TIMEOUT = 240_000;
/** The sandbox's BVN (docs/test-mode.md). */
const TEST_IDENTITIES_BVN = TEST_IDENTITY_KEYS.bvn;

let web: WebContext;
let site: CustomerSite;
/** One Chromium per camera video (null: no camera), started when first needed. */
const browsers = new Map<string | null, Promise<Browser>>();

function browserWith(video: string | null): Promise<Browser> {
  if (!browsers.has(video)) browsers.set(video, launchWithCamera(video));
  return browsers.get(video)!;
}

beforeAll(async () => {
  web = await buildWebContext({ livenessThresholds: BROWSER_LIVENESS_LIMITS });
  site = await customerSite(web.baseUrl);
  await importLivePerson(web);
}, 120_000);
afterAll(async () => {
  await Promise.all([...browsers.values()].map(async (browser) => (await browser).close()));
  await site?.close();
  await web?.close();
});

describe('the hosted verification flow', () => {
  it('takes a person from the link through consent, ID and a live selfie to the redirect', async () => {
    const org = await web.org({ name: 'Kudi Bank', fund: 10_000_000 });
    const session = await createSession(web, org.liveSecret, { idTypes: ['BVN', 'NIN'], redirectUrl: `${site.origin}/return?from=vouch` });
    const browser = await browserWith(cameraVideo('genuine.mjpeg'));
    const context = await phoneContext(browser, web.baseUrl);
    const page = await context.newPage();
    const errors = watchErrors(page);

    await page.goto(session.url);
    expect(await page.getByText('TEST MODE').count()).toBe(0);
    await page.getByText('Step 1 of 4 · Consent').waitFor();
    // What is collected, why, for how long and who sees it: the server's consent text.
    for (const heading of ['What is collected', 'Why', 'How long it is kept', 'Who sees it']) await page.getByRole('heading', { name: heading }).waitFor();
    await page.getByText('Kudi Bank', { exact: true }).first().waitFor();
    await consentAndId(page, LIVE_PERSON.bvn, { shots: true, choose: true });
    await noOverflow(page);
    await screenshot(page, 'verify-selfie');
    await takeSelfie(page, true);

    await page.getByRole('heading', { name: 'You are verified' }).waitFor({ timeout: 90_000 });
    await screenshot(page, 'verify-result');
    const done = await fetchSession(web, org.liveSecret, session.id);
    expect(done.status.status).toMatch(/verified/i);
    expect(done.checks.liveness?.passed).toBe(true);
    expect(done.checks.faceMatch?.passed).toBe(true);

    // Back to the organization with the session id and status (the query it already had is kept).
    await page.getByRole('button', { name: 'Continue to Kudi Bank' }).click();
    await page.waitForURL((url) => url.origin === site.origin && url.pathname === '/return');
    const back = new URL(page.url());
    expect(Object.fromEntries(back.searchParams)).toEqual({ from: 'vouch', session_id: session.id, status: 'verified' });
    expect(errors).toEqual([]);
    await context.close();
  }, FLOW_TIMEOUT);

  it('tells the person a live session cannot go on while its organization’s wallet is empty; nothing is looked up', async () => {
    const org = await web.org({ name: 'Empty Wallet Loans', fund: 10_000_000 });
    const session = await createSession(web, org.liveSecret, { idTypes: ['BVN'] });
    await web.database.db.updateTable('organizations').set({ balance: 0 }).where('id', '=', org.id).execute();
    const browser = await browserWith(null);
    const context = await phoneContext(browser, web.baseUrl);
    const page = await context.newPage();

    await page.goto(session.url);
    await page.getByRole('button', { name: 'I agree, continue' }).click();
    await page.getByRole('heading', { name: 'Your ID' }).waitFor();
    await page.getByLabel('BVN number').fill(LIVE_PERSON.bvn);
    await page.getByRole('button', { name: 'Check my ID' }).click();
    await page.getByRole('heading', { name: 'That did not work' }).waitFor();
    await page.getByText('The organization that asked for this verification cannot take it further just now. Please try again later, or contact them.').waitFor();
    await noOverflow(page);
    const after = await fetchSession(web, org.liveSecret, session.id);
    expect(after.checks.idLookup).toBeNull();
    await context.close();
  }, FLOW_TIMEOUT);

  it('fails a still photo held to the camera, says why, and offers another try', async () => {
    const org = await web.org({ name: 'Paga Test' });
    const session = await createSession(web, org.testSecret, { idTypes: ['BVN'], checks: { liveness: true, faceMatch: true } });
    const browser = await browserWith(cameraVideo('still-photo.mjpeg'));
    const context = await phoneContext(browser, web.baseUrl);
    const page = await context.newPage();

    await page.goto(session.url);
    // Test mode says so on every step.
    await page.getByRole('note').getByText('TEST MODE').waitFor();
    await page.getByRole('heading', { name: /needs to confirm your identity/ }).waitFor();
    await screenshot(page, 'verify-test-mode');
    await page.getByRole('button', { name: 'I agree, continue' }).click();
    await page.getByRole('heading', { name: 'Your ID' }).waitFor();

    // A number the registry does not have: said at the field, with the tries left.
    await page.getByLabel('BVN number').fill('22345678900');
    await page.getByRole('button', { name: 'Check my ID' }).click();
    await page.getByRole('alert').getByText(/could not verify this ID/).waitFor();
    await page.getByText('2 tries left.').waitFor();
    expect(await page.getByLabel('BVN number').getAttribute('aria-invalid')).toBe('true');
    // The connection drops on the next try: the page says so, and trying again keeps the number.
    await page.route('**/verify/api/*/id', (route) => route.abort('internetdisconnected'), { times: 1 });
    await page.getByLabel('BVN number').fill(TEST_IDENTITIES_BVN);
    await page.getByRole('button', { name: 'Check my ID' }).click();
    await page.getByRole('heading', { name: 'No connection' }).waitFor();
    await page.getByRole('button', { name: 'Try again' }).click();
    expect(await page.getByLabel('BVN number').inputValue()).toBe(TEST_IDENTITIES_BVN);
    await page.getByRole('button', { name: 'Check my ID' }).click();
    await page.getByRole('heading', { name: 'Take a selfie video' }).waitFor();
    await page.getByText('3 tries left.').waitFor();

    await takeSelfie(page);
    await page.getByRole('heading', { name: 'Let us try the selfie again' }).waitFor({ timeout: 90_000 });
    const after = await fetchSession(web, org.testSecret, session.id);
    const reasons = after.checks.liveness?.reasons ?? [];
    expect(reasons.length).toBeGreaterThan(0);
    expect(reasons).not.toContain('REPLAYED_FRAMES');
    for (const reason of reasons) await page.getByRole('alert').getByText(reasonText(reason)).waitFor();
    await page.getByText('2 tries left.').waitFor();
    await page.getByRole('button', { name: 'Start camera' }).waitFor();
    await screenshot(page, 'verify-retry');
    expect(after.status.status).not.toMatch(/verified/i);
    await context.close();
  }, FLOW_TIMEOUT);
});
