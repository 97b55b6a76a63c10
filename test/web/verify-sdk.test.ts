import { randomBytes } from 'node:crypto';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildWebContext, screenshot, watchErrors, type WebContext } from '../helpers/browser.js';
import { BROWSER_LIVENESS_LIMITS, cameraVideo, createSession, customerSite, fetchSession, importLivePerson, launchWithCamera, LIVE_PERSON, phoneContext, type CustomerSite } from './verify-helpers.js';

/**
 * The web SDK on docs/demo/sdk-demo.html, served from a second local origin (http://localhost:N)
 * while Vouch runs at http://127.0.0.1:M: the modal, the flow inside it with a fake camera, the
 * callbacks, and messages from anywhere but the SDK's own frame ignored.
 */

const SDK_TIMEOUT = 240_000;

let web: WebContext;
let site: CustomerSite;
let browser: Browser;

beforeAll(async () => {
  web = await buildWebContext({ livenessThresholds: BROWSER_LIVENESS_LIMITS });
  site = await customerSite(web.baseUrl);
  await importLivePerson(web);
  browser = await launchWithCamera(cameraVideo('genuine.mjpeg'));
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await site?.close();
  await web?.close();
});

/** The demo page on a phone (the window fills the screen), or on a desktop (a panel over the page). */
async function demoPage({ desktop = false } = {}): Promise<{ page: Page; errors: string[]; close(): Promise<void> }> {
  const context = desktop ? await browser.newContext({ baseURL: site.origin, viewport: { width: 1280, height: 800 } }) : await phoneContext(browser, site.origin);
  const page = await context.newPage();
  const errors = watchErrors(page);
  await page.goto('/sdk-demo.html');
  await page.getByRole('heading', { name: 'Open an account' }).waitFor();
  return { page, errors, close: () => context.close() };
}

function events(page: Page): Promise<string[]> {
  return page.getByRole('list', { name: 'What happened' }).getByRole('listitem').allTextContents();
}

describe('the web SDK on the demo page', () => {
  it('opens the flow in a modal on another origin, and reports the result to the page', async () => {
    const org = await web.org({ name: 'Demo Bank', fund: 10_000_000 });
    const session = await createSession(web, org.liveSecret, { idTypes: ['BVN'] });
    const { page, errors, close } = await demoPage();
    await page.getByLabel('Client secret (vcs_...)').fill(session.clientSecret);
    await page.getByRole('button', { name: 'Verify my identity' }).click();

    const dialog = page.getByRole('dialog', { name: 'Identity verification' });
    await dialog.waitFor();
    const iframe = page.locator('iframe[title="Verify your identity"]');
    expect(await iframe.getAttribute('allow')).toBe('camera');
    expect(new URL((await iframe.getAttribute('src'))!).searchParams.get('origin')).toBe(site.origin);
    const frame = page.frameLocator('iframe[title="Verify your identity"]');
    await frame.getByRole('heading', { name: 'Demo Bank needs to confirm your identity' }).waitFor();
    await screenshot(page, 'verify-sdk-modal');

    // A message from anything but Vouch's own frame is ignored, however well formed.
    await page.evaluate(() => window.postMessage({ type: 'vouch.complete', sessionId: 'ses_forged', status: 'verified' }, '*'));
    await page.waitForTimeout(300);
    expect(await events(page)).toEqual([]);

    await frame.getByRole('button', { name: 'I agree, continue' }).click();
    await frame.getByLabel('BVN number').fill(LIVE_PERSON.bvn);
    await frame.getByRole('button', { name: 'Check my ID' }).click();
    // The selfie: a capture slower than a phone's is the test machine's doing (BROWSER_LIVENESS_LIMITS).
    await frame.getByRole('button', { name: 'Start camera' }).click();
    await frame.getByRole('button', { name: 'I am ready' }).click();
    await frame.getByRole('heading', { name: 'You are verified' }).waitFor({ timeout: 90_000 });
    await expect.poll(() => events(page)).toEqual([`Completed: ${session.id} verified`]);
    expect((await fetchSession(web, org.liveSecret, session.id)).status.status).toMatch(/verified/i);

    // "Done" closes the window; closing after the end is not a cancel.
    await frame.getByRole('button', { name: 'Done' }).click();
    await dialog.waitFor({ state: 'detached' });
    expect(await events(page)).toEqual([`Completed: ${session.id} verified`]);
    expect(errors).toEqual([]);
    await close();
  }, SDK_TIMEOUT);

  // Alone this takes about a second. It used to hang now and then until its time limit (in CI runs
  // since 2026-11-28, and one run in six on an idle machine): at its last step, see there.
  it('says when the window is closed early, when the secret is not one, and when the session is unknown', { timeout: 30_000 }, async () => {
    const org = await web.org({ name: 'Demo Bank Two' });
    const session = await createSession(web, org.testSecret);
    const { page, close } = await demoPage({ desktop: true });
    const secret = page.getByLabel('Client secret (vcs_...)');
    const open = page.getByRole('button', { name: 'Verify my identity' });

    await secret.fill(session.clientSecret);
    await open.click();
    await page.frameLocator('iframe[title="Verify your identity"]').getByRole('note').getByText('TEST MODE').waitFor();
    await screenshot(page, 'verify-sdk-desktop');
    await page.getByRole('button', { name: 'Close verification' }).click();
    await page.getByRole('dialog').waitFor({ state: 'detached' });
    expect(await events(page)).toEqual(['Cancelled: closed closed']);

    await secret.fill('sk_test_not_a_client_secret');
    await open.click();
    await expect.poll(() => events(page)).toHaveLength(2);
    expect((await events(page))[1]).toMatch(/^Error: INVALID_CLIENT_SECRET /);
    expect(await page.getByRole('dialog').count()).toBe(0);

    await secret.fill(`vcs_${randomBytes(32).toString('base64url')}`);
    await open.click();
    await page.frameLocator('iframe[title="Verify your identity"]').getByRole('heading', { name: 'This link is not valid' }).waitFor();
    await expect.poll(() => events(page)).toHaveLength(3);
    expect((await events(page))[2]).toMatch(/^Error: NOT_FOUND /);
    // The key goes down inside Vouch's frame, which asks the page to close the window, and is let up
    // once the window is gone: Playwright's press() sent the key up to the frame as it was being
    // removed, and the frame's process never acknowledged it. That hung about one run in six.
    await page.keyboard.down('Escape');
    await page.getByRole('dialog').waitFor({ state: 'detached' });
    await page.keyboard.up('Escape');
    await close();
  });
});
