import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildWebContext, screenshot, watchErrors, type WebContext } from '../helpers/browser.js';
import { TEST_IDENTITY_KEYS } from '../../src/identities/registry/test-identities.js';
import { BROWSER_LIVENESS_LIMITS, cameraVideo, consentAndId, createSession, customerSite, importLivePerson, launchWithCamera, LIVE_PERSON, phoneContext, takeSelfie, type CustomerSite } from './verify-helpers.js';

/**
 * When the camera cannot be opened, in Chromium on a real server: a browser without a camera (a
 * desktop, or an in-app browser that gives none) offers a QR code and a short link; a phone with
 * a fake camera opens the link and takes the selfie; the first page shows the phone's result. A
 * camera the browser blocks is explained, with the phone offered, and opens once allowed.
 */

const FLOW_TIMEOUT = 240_000;

let web: WebContext;
let site: CustomerSite;
const browsers: Browser[] = [];

beforeAll(async () => {
  web = await buildWebContext({ livenessThresholds: BROWSER_LIVENESS_LIMITS });
  site = await customerSite(web.baseUrl);
  await importLivePerson(web);
  browsers.push(
    await launchWithCamera(null),
    await launchWithCamera(cameraVideo('genuine.mjpeg')),
    await launchWithCamera(cameraVideo('genuine.mjpeg'), { prompt: false }),
  );
}, 120_000);
afterAll(async () => {
  await Promise.all(browsers.map((browser) => browser.close()));
  await site?.close();
  await web?.close();
});

describe('continuing on a phone', () => {
  it('hands off to a phone when this device has no camera, and shows the phone\'s result here', async () => {
    const org = await web.org({ name: 'Carbon Credit', fund: 10_000_000 });
    const session = await createSession(web, org.liveSecret, { idTypes: ['BVN'], redirectUrl: `${site.origin}/return` });
    // A device whose browser has no camera: a desktop, or a phone's in-app browser that gives none.
    const desktop = await phoneContext(browsers[0]!, web.baseUrl);
    const page = await desktop.newPage();
    const errors = watchErrors(page);
    await page.goto(session.url);
    await consentAndId(page, LIVE_PERSON.bvn);

    await page.getByRole('button', { name: 'Start camera' }).click();
    await page.getByRole('heading', { name: 'No camera found' }).waitFor();
    await screenshot(page, 'verify-no-camera');
    await page.getByRole('button', { name: 'Continue on my phone' }).click();
    await page.getByRole('heading', { name: 'Continue on your phone' }).waitFor();
    const qr = page.getByRole('img', { name: /^QR code for http/ });
    await qr.waitFor();
    expect(await qr.evaluate((image: HTMLImageElement) => image.complete && image.naturalWidth > 0)).toBe(true);
    const shortUrl = (await page.locator('.short-link strong').textContent())!;
    expect(shortUrl).toMatch(new RegExp(`^${web.baseUrl}/v/[a-z2-9]{10}$`));
    await page.getByRole('status').getByText('Waiting for your selfie on your phone…').waitFor();
    await screenshot(page, 'verify-handoff');

    // The phone opens the short link, which leads to the same session at its selfie step.
    const phone = await phoneContext(browsers[1]!, web.baseUrl);
    const phonePage = await phone.newPage();
    await phonePage.goto(shortUrl);
    expect(new URL(phonePage.url()).pathname).toMatch(/^\/verify\/[A-Za-z0-9_-]{43}$/);
    await phonePage.getByRole('heading', { name: 'Take a selfie video' }).waitFor();
    await takeSelfie(phonePage);
    await phonePage.getByRole('heading', { name: 'You are verified' }).waitFor({ timeout: 90_000 });

    // The desktop page was waiting: it shows the result and goes back to the organization.
    await page.getByRole('heading', { name: 'You are verified' }).waitFor({ timeout: 30_000 });
    await page.waitForURL((url) => url.origin === site.origin && url.searchParams.get('status') === 'verified', { timeout: 15_000 });
    expect(new URL(page.url()).searchParams.get('session_id')).toBe(session.id);
    // Chromium reports the absent camera on the console; nothing else may go wrong.
    expect(errors.filter((error) => !/Requested device not found|NotFoundError/.test(error))).toEqual([]);
    await desktop.close();
    await phone.close();
  }, FLOW_TIMEOUT);

  it('says how to allow a blocked camera, offers the phone, and opens the camera once allowed', async () => {
    const org = await web.org({ name: 'Blocked Camera Test' });
    const session = await createSession(web, org.testSecret, { idTypes: ['BVN'] });
    const context = await phoneContext(browsers[2]!, web.baseUrl);
    const page = await context.newPage();
    await page.goto(session.url);
    await consentAndId(page, TEST_IDENTITY_KEYS.bvn);

    await page.getByRole('button', { name: 'Start camera' }).click();
    await page.getByRole('heading', { name: 'Camera access is blocked' }).waitFor();
    await page.getByText(/tap the camera or lock icon next to the web address, choose Allow/).waitFor();
    expect(await page.getByRole('button', { name: 'Continue on my phone' }).isVisible()).toBe(true);
    await screenshot(page, 'verify-camera-blocked');

    // The person allows the camera in the browser's settings, then tries again.
    await context.grantPermissions(['camera'], { origin: web.baseUrl });
    await page.getByRole('button', { name: 'Try again' }).click();
    await page.getByRole('button', { name: 'Start camera' }).click();
    await page.getByRole('heading', { name: 'Put your face in the oval' }).waitFor();
    await context.close();
  }, FLOW_TIMEOUT);
});
