import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildWebContext, screenshot, watchErrors, type WebContext } from '../helpers/browser.js';
import { NOWHERE_WEBHOOK_URL } from '../helpers/app.js';
import { addMember, portalUser, type PortalUser } from '../helpers/portal.js';
import { completeWithHelper, createSession, livenessAttempt, stillPhoto, toLiveness, type MadeSession } from '../portal/session-fixtures.js';
import { httpClient, SANDBOX } from '../sessions/fixtures.js';

/**
 * Verification sessions in the portal's explorer, in Chromium at phone width: the Sessions tab
 * lists them; a session's page shows its steps, the ID found masked, the liveness attempt with
 * its challenges and reasons, frames blurred until an owner reveals them (each revealed frame
 * access-logged), and its webhook; a viewer sees the frames blurred only.
 * With VOUCH_SCREENSHOTS=1: docs/images/portal-session-detail.png (and -list).
 */
let web: WebContext;
let orgId: string;
let owner: PortalUser;
let viewer: PortalUser;
let failed: MadeSession;
let withFrames: MadeSession;
let withBrokenFrame: MadeSession;

beforeAll(async () => {
  web = await buildWebContext({ webhookUrl: NOWHERE_WEBHOOK_URL });
  const org = await web.org({ name: 'Kolo Microfinance' });
  orgId = org.id;
  owner = await portalUser(web.database.db);
  await addMember(web.database.db, org.id, owner.personId, 'owner');
  viewer = await portalUser(web.database.db);
  await addMember(web.database.db, org.id, viewer.personId, 'viewer');
  const http = httpClient(web.baseUrl);
  failed = await createSession(http, org.testSecret, { reference: 'loan-4471', applicant: { firstname: 'Adaeze', lastname: 'Okonkwo' } });
  await toLiveness(http, failed, SANDBOX.bvn);
  await completeWithHelper(http, org.testSecret, failed, 'failed', 'FACE_MISMATCH');
  withFrames = await createSession(http, org.testSecret, { reference: 'loan-4472' });
  await toLiveness(http, withFrames, SANDBOX.bvn);
  await livenessAttempt(http, withFrames, await stillPhoto(90));
  withBrokenFrame = await createSession(http, org.testSecret, { reference: 'loan-4473' });
  await toLiveness(http, withBrokenFrame, SANDBOX.bvn);
  // The third frame: a JPEG's first bytes only, which the engine counts as a frame without a picture.
  await livenessAttempt(http, withBrokenFrame, (await stillPhoto(89)).map((frame, i) => (i === 2 ? { ...frame, jpeg: frame.jpeg.subarray(0, 300) } : frame)));
}, 180_000);
afterAll(async () => {
  await web?.close();
});

async function signedIn(user: PortalUser): Promise<Page> {
  const { context, page } = await web.newPage({ phone: true });
  const [name, value] = user.cookie.split('=') as [string, string];
  await context.addCookies([{ name, value, url: web.baseUrl, httpOnly: true, sameSite: 'Lax' }]);
  return page;
}

const frameViews = async () =>
  (await web.database.db.selectFrom('personal_data_access_records').select('id').where('org_id', '=', orgId).where('resource', '=', 'session').where('resource_id', '=', withFrames.id).where('action', '=', 'view').execute()).length;

describe('sessions in the portal explorer (phone width)', () => {
  it('lists sessions and shows a failed one’s steps, the ID masked, the reason in words and its webhook', { timeout: 120_000 }, async () => {
    const page = await signedIn(owner);
    const errors = watchErrors(page);
    await page.goto('/verifications');
    await page.getByRole('tab', { name: 'Sessions' }).click();
    const table = page.getByRole('table', { name: 'Sessions' });
    await expect.poll(() => table.getByRole('link', { name: 'loan-4471' }).isVisible(), { timeout: 15_000 }).toBe(true);
    expect(await table.getByText('Not verified').isVisible()).toBe(true);
    await page.getByLabel('Search').fill('loan-4472');
    await expect.poll(() => table.getByRole('link', { name: 'loan-4471' }).count()).toBe(0);
    await page.getByLabel('Search').fill('');
    await expect.poll(() => table.getByRole('link', { name: 'loan-4471' }).isVisible()).toBe(true);
    await screenshot(page, 'portal-sessions-list');

    await table.getByRole('link', { name: 'loan-4471' }).click();
    await expect.poll(() => page.getByRole('heading', { name: 'Session loan-4471' }).isVisible(), { timeout: 15_000 }).toBe(true);
    const person = page.getByRole('region', { name: 'ID and person' });
    expect(await person.getByText('223******01').isVisible()).toBe(true);
    expect(await person.getByText('Adaeze Chiamaka Okonkwo').isVisible()).toBe(true);
    expect(await page.content()).not.toContain(SANDBOX.bvn.idNumber);
    const why = page.getByRole('list', { name: 'Reasons of the session' });
    expect(await why.getByText('The live face is not the face on the registry photo').isVisible()).toBe(true);
    const steps = page.getByRole('region', { name: 'Steps' });
    expect(await steps.getByText('Consent recorded').isVisible()).toBe(true);
    expect(await steps.getByText('ID check passed').isVisible()).toBe(true);
    expect(await steps.getByText('Face match failed').isVisible()).toBe(true);
    const deliveries = page.getByRole('table', { name: 'Webhook deliveries of this session' });
    expect(await deliveries.getByText('session.completed').isVisible()).toBe(true);
    expect(errors).toEqual([]);
  });

  it('shows an attempt’s challenges and reasons with its frames blurred; the owner reveals them, each frame seen is access-logged', { timeout: 120_000 }, async () => {
    const page = await signedIn(owner);
    const errors = watchErrors(page);
    await page.goto(`/verifications/sessions/${withFrames.id}`);
    const attempt = page.getByRole('region', { name: 'Liveness attempt 1' });
    await expect.poll(() => attempt.isVisible(), { timeout: 15_000 }).toBe(true);
    const challenges = attempt.getByRole('table', { name: 'Challenges of attempt 1' });
    expect(await challenges.getByRole('row').count()).toBeGreaterThanOrEqual(3);
    expect(await attempt.getByRole('list', { name: 'Reasons of attempt 1' }).getByRole('listitem').count()).toBeGreaterThan(0);
    const blurred = attempt.getByRole('img', { name: /^Frame 1 of attempt 1, blurred/ });
    await expect.poll(() => blurred.evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth)).toBe(160);
    const before = await frameViews();
    await screenshot(page, 'portal-session-detail');

    await attempt.getByRole('button', { name: 'Reveal the frames of attempt 1' }).click();
    const revealed = attempt.getByRole('img', { name: /^Frame 1 of attempt 1(,|$)/ }).first();
    await expect.poll(() => revealed.evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth), { timeout: 15_000 }).toBeGreaterThan(160);
    const shown = await attempt.getByRole('img').count();
    await expect.poll(frameViews, { timeout: 15_000 }).toBe(before + shown);
    await attempt.getByRole('button', { name: 'Blur the frames of attempt 1' }).click();
    await expect.poll(() => attempt.getByRole('img', { name: /blurred/ }).count()).toBe(shown);
    expect(errors).toEqual([]);
  });

  it('a frame that does not decode is shown as “Not a picture”, blurred or revealed', { timeout: 120_000 }, async () => {
    const page = await signedIn(owner);
    const errors = watchErrors(page);
    await page.goto(`/verifications/sessions/${withBrokenFrame.id}`);
    const attempt = page.getByRole('region', { name: 'Liveness attempt 1' });
    await expect.poll(() => attempt.getByLabel(/^Frame 3 of attempt 1, blurred: not a picture/).isVisible(), { timeout: 15_000 }).toBe(true);
    expect(await attempt.getByRole('img', { name: /^Frame 3 of attempt 1/ }).count()).toBe(0);
    await expect.poll(() => attempt.getByRole('img', { name: /^Frame 4 of attempt 1, blurred/ }).evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth)).toBe(160);
    await attempt.getByRole('button', { name: 'Reveal the frames of attempt 1' }).click();
    // As taken the bytes are sent as they came; the browser cannot draw them either.
    await expect.poll(() => attempt.getByLabel(/^Frame 3 of attempt 1: not a picture/).isVisible(), { timeout: 15_000 }).toBe(true);
    // The failed image loads are the browser's console errors; nothing else went wrong.
    expect(errors.filter((error) => !/422|Failed to load resource/.test(error))).toEqual([]);
  });

  it('a session that ended unpaid shows the ID masked without the registry’s details, and says why', { timeout: 120_000 }, async () => {
    // The state the charge leaves when the wallet cannot pay at the end (tested through the API in
    // test/sessions/lookup-charge.test.ts), set on an ended session here.
    await web.database.db.updateTable('verification_sessions').set({ unpaid: true }).where('public_id', '=', failed.id).execute();
    try {
      const page = await signedIn(owner);
      const errors = watchErrors(page);
      await page.goto(`/verifications/sessions/${failed.id}`);
      const person = page.getByRole('region', { name: 'ID and person' });
      await expect.poll(() => person.getByText('the wallet could not pay this session’s price when it ended').isVisible(), { timeout: 15_000 }).toBe(true);
      expect(await person.getByText('223******01').isVisible()).toBe(true);
      expect(await person.getByText('Adaeze Chiamaka Okonkwo').count()).toBe(0);
      expect(errors).toEqual([]);
    } finally {
      await web.database.db.updateTable('verification_sessions').set({ unpaid: false }).where('public_id', '=', failed.id).execute();
    }
  });

  it('a viewer sees the frames blurred only, with who can reveal them', { timeout: 120_000 }, async () => {
    const page = await signedIn(viewer);
    await page.goto(`/verifications/sessions/${withFrames.id}`);
    const attempt = page.getByRole('region', { name: 'Liveness attempt 1' });
    await expect.poll(() => attempt.isVisible(), { timeout: 15_000 }).toBe(true);
    expect(await attempt.getByText('an owner, admin or developer can reveal them').isVisible()).toBe(true);
    expect(await attempt.getByRole('button', { name: /Reveal/ }).count()).toBe(0);
    expect(await attempt.getByRole('img', { name: /blurred/ }).count()).toBeGreaterThan(0);
    // An open test session whose ID was found: it paid (nothing, in test mode) with its lookup, so
    // the registry's details are shown, and nothing is said to wait for a payment.
    const person = page.getByRole('region', { name: 'ID and person' });
    expect(await person.getByText('ID type').isVisible()).toBe(true);
    expect(await page.getByText('The registry’s details are shown once').count()).toBe(0);
    // An unknown session says so, with the way back.
    await page.goto('/verifications/sessions/ses_00000000000000000000');
    await expect.poll(() => page.getByText('Session not found').isVisible(), { timeout: 15_000 }).toBe(true);
    expect(await page.getByRole('link', { name: '← All sessions' }).isVisible()).toBe(true);
  });
});
