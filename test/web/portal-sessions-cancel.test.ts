import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NOWHERE_WEBHOOK_URL } from '../helpers/app.js';
import { buildWebContext, watchErrors, type WebContext } from '../helpers/browser.js';
import { addMember, portalUser, type PortalUser } from '../helpers/portal.js';
import { completeWithHelper, createSession, toLiveness, type MadeSession } from '../portal/session-fixtures.js';
import { httpClient, SANDBOX } from '../sessions/fixtures.js';
import { noOverflow } from './verify-helpers.js';

/**
 * Cancelling a verification session from its page, in Chromium at phone width: the owner sees
 * Cancel session on an open session only, confirms in a dialog, and the page then shows it
 * cancelled without the button; a viewer never sees the button. A session whose ID was found
 * shows that ID without the registry's details, and its dialog says cancelling is charged.
 */
let web: WebContext;
let testSecret: string;
let owner: PortalUser;
let viewer: PortalUser;
let open: MadeSession;
let verified: MadeSession;
let idFound: MadeSession;

beforeAll(async () => {
  web = await buildWebContext({ webhookUrl: NOWHERE_WEBHOOK_URL });
  const org = await web.org({ name: 'Sokoto Savings' });
  testSecret = org.testSecret;
  owner = await portalUser(web.database.db);
  await addMember(web.database.db, org.id, owner.personId, 'owner');
  viewer = await portalUser(web.database.db);
  await addMember(web.database.db, org.id, viewer.personId, 'viewer');
  const http = httpClient(web.baseUrl);
  open = await createSession(http, org.testSecret, { reference: 'loan-9001' });
  verified = await createSession(http, org.testSecret, { reference: 'loan-9002' });
  idFound = await createSession(http, org.testSecret, { reference: 'loan-9003' });
  await toLiveness(http, idFound, SANDBOX.bvn);
  await completeWithHelper(http, org.testSecret, verified, 'verified');
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

describe('cancelling a session in the portal (phone width)', () => {
  it('a viewer sees no Cancel session button; an ended session has none', { timeout: 60_000 }, async () => {
    const page = await signedIn(viewer);
    await page.goto(`/verifications/sessions/${open.id}`);
    await page.getByRole('heading', { name: 'Session loan-9001' }).waitFor();
    expect(await page.getByRole('button', { name: 'Cancel session' }).count()).toBe(0);
    const ownerPage = await signedIn(owner);
    await ownerPage.goto(`/verifications/sessions/${verified.id}`);
    await ownerPage.getByRole('heading', { name: 'Session loan-9002' }).waitFor();
    expect(await ownerPage.getByRole('button', { name: 'Cancel session' }).count()).toBe(0);
  });

  it('a session whose ID was found shows the registry’s details (it paid, at no cost in test mode, with its lookup), and cancelling it charges nothing', { timeout: 60_000 }, async () => {
    const page = await signedIn(owner);
    const errors = watchErrors(page);
    await page.goto(`/verifications/sessions/${idFound.id}`);
    await page.getByRole('heading', { name: 'Session loan-9003' }).waitFor();
    await page.getByRole('region', { name: 'ID and person' }).getByText(SANDBOX.bvn.lastname, { exact: false }).first().waitFor();
    expect(await page.getByText('The registry’s details are shown once').count()).toBe(0);
    await page.getByRole('button', { name: 'Cancel session' }).click();
    const dialog = page.getByRole('dialog', { name: 'Cancel this session?' });
    await dialog.getByText('Nothing is charged and no webhook is sent').waitFor();
    await dialog.getByRole('button', { name: 'Keep it' }).click();
    expect(errors).toEqual([]);
  });

  it('the owner cancels an open session after confirming; the page then shows it cancelled', { timeout: 60_000 }, async () => {
    const page = await signedIn(owner);
    const errors = watchErrors(page);
    await page.goto(`/verifications/sessions/${open.id}`);
    await page.getByRole('heading', { name: 'Session loan-9001' }).waitFor();
    await page.getByRole('button', { name: 'Cancel session' }).click();
    const dialog = page.getByRole('dialog', { name: 'Cancel this session?' });
    await dialog.getByText('Nothing is charged and no webhook is sent').waitFor();
    // Keeping it changes nothing.
    await dialog.getByRole('button', { name: 'Keep it' }).click();
    await dialog.waitFor({ state: 'hidden' });
    expect((await web.database.db.selectFrom('verification_sessions').select('status').where('public_id', '=', open.id).executeTakeFirstOrThrow()).status).toBe('created');

    await page.getByRole('button', { name: 'Cancel session' }).click();
    await noOverflow(page);
    await page.getByRole('dialog', { name: 'Cancel this session?' }).getByRole('button', { name: 'Yes, cancel it' }).click();
    await page.getByRole('status').filter({ hasText: 'Cancelled. The person’s link no longer works' }).waitFor();
    await expect.poll(() => page.getByRole('button', { name: 'Cancel session' }).count()).toBe(0);
    await page.getByText('Cancelled', { exact: true }).first().waitFor();
    await noOverflow(page);
    expect((await web.database.db.selectFrom('verification_sessions').select('status').where('public_id', '=', open.id).executeTakeFirstOrThrow()).status).toBe('cancelled');
    expect(errors).toEqual([]);
    // The API agrees.
    const fetched = await httpClient(web.baseUrl).get(`/v1/verifications/sessions/${open.id}`, testSecret);
    expect(fetched.json().data.status.status).toBe('CANCELLED');
  });
});
