import { readFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import path from 'node:path';
import { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { expect } from 'vitest';
import { importRegistry } from '../../src/identities/registry/import.js';
import type { LivenessThresholds } from '../../src/identities/liveness/settings.js';
import { CHROMIUM, screenshot } from '../helpers/browser.js';
import type { WebContext } from '../helpers/browser.js';

/**
 * What the hosted-flow browser tests share: Chromium with a fake camera playing an MJPEG file
 * (or no camera at all), a phone-sized context, sessions made through the customer API, and a
 * second local origin standing for the customer's website (the SDK demo page, the redirect target).
 */

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
export const LIVENESS_FIXTURES = path.join(ROOT, 'test/fixtures/liveness');

/**
 * Chromium whose camera plays `video` (an MJPEG file), or that has no camera when `video` is null.
 * The camera prompt is answered Allow, or with `prompt: false` left to the page's permissions
 * (headless Chromium then refuses the camera until a context grants it).
 */
export function launchWithCamera(video: string | null, { prompt = true } = {}): Promise<Browser> {
  const camera = video ? ['--use-fake-device-for-media-stream', `--use-file-for-fake-video-capture=${video}`] : [];
  return chromium.launch({
    executablePath: CHROMIUM,
    args: ['--no-sandbox', '--disable-dev-shm-usage', ...(prompt ? ['--use-fake-ui-for-media-stream'] : []), ...camera],
  });
}

/**
 * The liveness engine's time limits in the browser tests. On a phone, the 25 frames of a selfie
 * span about 5 s, and the engine allows 8 s in all and 5 s between two movements. Chromium on a
 * slow CI machine, its two cores shared by two test files, PostgreSQL and other browsers, has
 * taken longer than that to grab and encode the frames ("The movements took too long", CI runs of
 * 2026-11-28 to 30), and a second selfie from the same looping video is rightly refused as
 * replayed. These tests are about the flow, not the timing: the time limits are tested on scripted
 * timings in test/liveness/decide.test.ts, and every other threshold stays the default.
 */
export const BROWSER_LIVENESS_LIMITS = { maxDurationMs: 60_000, maxChallengeGapMs: 60_000 } satisfies Partial<LivenessThresholds>;

/** A phone: 360 px wide (the narrowest common Android width), touch. */
export function phoneContext(browser: Browser, baseURL: string): Promise<BrowserContext> {
  return browser.newContext({ baseURL, viewport: { width: 360, height: 740 }, deviceScaleFactor: 1, isMobile: true, hasTouch: true });
}

export interface CreatedSession {
  id: string;
  url: string;
  clientSecret: string;
  status: { status: string };
}

export async function createSession(web: WebContext, secret: string, body: Record<string, unknown> = {}): Promise<CreatedSession> {
  const res = await fetch(`${web.baseUrl}/v1/verifications/sessions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const answer = (await res.json()) as { data: CreatedSession };
  if (res.status !== 201) throw new Error(`session not created: ${res.status} ${JSON.stringify(answer)}`);
  return answer.data;
}

export async function fetchSession(web: WebContext, secret: string, id: string): Promise<Record<string, unknown> & { status: { status: string }; checks: Record<string, { passed: boolean; reasons: string[] } | null> }> {
  const res = await fetch(`${web.baseUrl}/v1/verifications/sessions/${id}`, { headers: { authorization: `Bearer ${secret}` } });
  return ((await res.json()) as { data: never }).data;
}

/** A live BVN record whose photo is the person filmed in genuine.mjpeg (test/fixtures/liveness). */
export const LIVE_PERSON = { bvn: '22190000001', firstname: 'Emeka', lastname: 'Obi', birthdate: '04-06-1990', gender: 'Male', phone: '08021234567' };

export async function importLivePerson(web: WebContext): Promise<void> {
  const photo = (await readFile(path.join(LIVENESS_FIXTURES, 'genuine-registry.jpg'))).toString('base64');
  await importRegistry(web.database.db, Readable.from([JSON.stringify({ type: 'bvn', record: { ...LIVE_PERSON, photo } })]));
}

export interface CustomerSite {
  /** http://localhost:PORT: another origin than Vouch's http://127.0.0.1:PORT. */
  origin: string;
  close(): Promise<void>;
}

/**
 * The customer's website on a second local origin: /sdk-demo.html is docs/demo/sdk-demo.html
 * loading the SDK from this Vouch; /return is where sessions redirect.
 */
export async function customerSite(vouchUrl: string): Promise<CustomerSite> {
  const demo = (await readFile(path.join(ROOT, 'docs/demo/sdk-demo.html'), 'utf8')).replace('http://127.0.0.1:8080/sdk/v1/vouch.js', `${vouchUrl}/sdk/v1/vouch.js`);
  const server: Server = createServer((request, response) => {
    const url = new URL(request.url ?? '/', 'http://localhost');
    if (url.pathname === '/sdk-demo.html') {
      response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(demo);
    } else if (url.pathname === '/return') {
      response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end('<!doctype html><title>Back at Demo Bank</title><h1>Back at Demo Bank</h1>');
    } else {
      // Browsers ask for /favicon.ico; anything else is not part of this site.
      response.writeHead(url.pathname === '/favicon.ico' ? 204 : 404).end();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return {
    origin: `http://localhost:${port}`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/** A fixture's file, for the fake camera. */
export function cameraVideo(fixture: 'genuine.mjpeg' | 'still-photo.mjpeg'): string {
  return path.join(LIVENESS_FIXTURES, fixture);
}

export async function noOverflow(page: Page): Promise<void> {
  expect(await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth)).toBeLessThanOrEqual(0);
}

/** Consent, then an ID number (choosing BVN when the session allows several types): where every flow below starts. */
export async function consentAndId(page: Page, bvn: string, { shots = false, choose = false } = {}): Promise<void> {
  await page.getByRole('heading', { name: /needs to confirm your identity/ }).waitFor();
  await noOverflow(page);
  if (shots) await screenshot(page, 'verify-consent');
  await page.getByRole('button', { name: 'I agree, continue' }).click();
  await page.getByRole('heading', { name: 'Your ID' }).waitFor();
  if (choose) await page.getByRole('radio', { name: /^BVN/ }).check();
  await page.getByLabel('BVN number').fill(bvn);
  if (shots) await screenshot(page, 'verify-id');
  await page.getByRole('button', { name: 'Check my ID' }).click();
  await page.getByRole('heading', { name: 'Take a selfie video' }).waitFor();
}

/** The selfie: open the camera, then follow the server's challenges until the frames are sent. */
export async function takeSelfie(page: Page, shots = false): Promise<void> {
  await page.getByRole('button', { name: 'Start camera' }).click();
  await page.getByRole('heading', { name: 'Put your face in the oval' }).waitFor();
  await expect.poll(() => page.locator('video').evaluate((video: HTMLVideoElement) => video.videoWidth)).toBeGreaterThan(0);
  if (shots) await screenshot(page, 'verify-camera');
  await page.getByRole('button', { name: 'I am ready' }).click();
  await page.getByText(/^Movement 1 of [23]$/).waitFor();
  expect(await page.getByRole('progressbar', { name: 'Selfie progress' }).isVisible()).toBe(true);
  // Mid-movement: the shared helper would wait for the network to settle, by then the capture is over.
  if (shots && process.env.VOUCH_SCREENSHOTS) await page.screenshot({ path: 'docs/images/verify-challenge.png' });
}
