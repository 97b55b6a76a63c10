import { readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import Fastify from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerErrorHandling } from '../../src/platform/errors.js';
import { isWebAppPath, registerWebApp, webDistDir } from '../../src/platform/web.js';
import { buildWebContext, watchErrors, type WebContext } from '../helpers/browser.js';
import { addMember, portalOrg, portalUser } from '../helpers/portal.js';

let web: WebContext;
beforeAll(async () => {
  web = await buildWebContext();
}, 120_000);
afterAll(() => web?.close());

/** Tests that drive Chromium: on a busy machine they may take longer than the default 30 s. */
const PAGE_TEST_TIMEOUT = 90_000;

describe('the web app as served by the API process', () => {
  it('answers the app for its own paths and JSON 404s for the APIs', async () => {
    for (const p of ['/', '/login', '/verifications/address/12', '/some/deep/link']) {
      const res = await fetch(`${web.baseUrl}${p}`);
      expect(res.status, p).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^text\/html/);
      expect(res.headers.get('cache-control')).toBe('no-cache');
      expect(await res.text()).toContain('<title>Vouch</title>');
    }
    for (const [p, body] of [
      ['/api/nope', { status: 'error', code: 'NOT_FOUND_ERROR' }],
      ['/v1/nope', { status: 'error', code: 'NOT_FOUND_ERROR' }],
      ['/assets/missing.js', { status: 'error', code: 'NOT_FOUND_ERROR' }],
      ['/verifications/identities/nope', { statusCode: 404 }],
    ] as const) {
      const res = await fetch(`${web.baseUrl}${p}`);
      expect(res.status, p).toBe(404);
      expect(res.headers.get('content-type')).toMatch(/^application\/json/);
      expect(await res.json()).toMatchObject(body);
    }
  });

  it('serves hashed assets pre-compressed and cached for a year, with security headers', async () => {
    const index = await readFile(path.join(webDistDir(), 'index.html'), 'utf8');
    const entry = /src="(\/assets\/[^"]+\.js)"/.exec(index)![1]!;
    const res = await fetch(`${web.baseUrl}${entry}`, { headers: { 'accept-encoding': 'br' } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-encoding')).toBe('br');
    expect(res.headers.get('cache-control')).toMatch(/max-age=31536000, immutable/);
    const html = await fetch(`${web.baseUrl}/`);
    expect(html.headers.get('content-security-policy')).toMatch(/script-src 'self'/);
    expect(html.headers.get('x-content-type-options')).toBe('nosniff');
    expect(html.headers.get('x-frame-options')).toBe('SAMEORIGIN');
  });

  it('keeps the first load within 300 KB of compressed JavaScript', async () => {
    const index = await readFile(path.join(webDistDir(), 'index.html'), 'utf8');
    const scripts = [...index.matchAll(/(?:src|href)="(\/assets\/[^"]+\.js)"/g)].map((m) => m[1]!);
    expect(scripts.length).toBeGreaterThan(0);
    let total = 0;
    for (const script of new Set(scripts)) total += (await stat(path.join(webDistDir(), `${script}.br`))).size;
    expect(total).toBeLessThanOrEqual(300 * 1024);
  });

  it('loads the sign-in page in Chromium without console errors, also at phone width', async () => {
    for (const phone of [false, true]) {
      const { context, page } = await web.newPage({ phone });
      const errors = watchErrors(page);
      await page.goto('/login');
      await page.getByRole('button', { name: 'Sign in' }).waitFor();
      expect(await page.getByLabel(/^Email/).count()).toBe(1);
      const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
      expect(overflow).toBeLessThanOrEqual(0);
      // A signed-out visit to a portal page goes to sign-in, and comes back after.
      await page.goto('/billing');
      await page.waitForURL(/\/login\?next=%2Fbilling/);
      expect(errors.filter((e) => !/401/.test(e))).toEqual([]);
      await context.close();
    }
  }, PAGE_TEST_TIMEOUT);

  it('keeps the API reference at /docs working under the security headers', async () => {
    const { context, page } = await web.newPage();
    const errors = watchErrors(page);
    await page.goto('/docs');
    await page.getByRole('heading', { name: /Vouch verification API/ }).waitFor();
    expect(errors).toEqual([]);
    await context.close();
  }, PAGE_TEST_TIMEOUT);

  it('frames signed-in pages with the mode (a Test data badge) and the organization, also at phone width', async () => {
    const { org, owner } = await portalOrg(web.database.db);
    const second = await web.org({ name: 'Second Org' });
    await addMember(web.database.db, second.id, owner.personId, 'viewer');
    for (const phone of [false, true]) {
      const { context, page } = await web.newPage({ phone });
      const errors = watchErrors(page);
      const [name, value] = owner.cookie.split('=');
      await context.addCookies([{ name: name!, value: value!, url: web.baseUrl }]);
      await page.goto('/');
      const mode = page.getByRole('radiogroup', { name: 'Mode' });
      await mode.waitFor();
      await expect.poll(() => page.getByText('Test data', { exact: true }).isVisible()).toBe(true);
      expect(await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth)).toBeLessThanOrEqual(0);
      // Live mode drops the badge and is remembered on this device.
      await mode.getByText('Live').click();
      await expect.poll(() => page.getByText('Test data', { exact: true }).count()).toBe(0);
      await page.reload();
      await mode.waitFor();
      expect(await page.getByRole('radio', { name: 'Live' }).isChecked()).toBe(true);
      // The organization switcher lives in the navigation (behind the burger on a phone).
      if (phone) await page.getByRole('button', { name: 'Open navigation' }).click();
      const switcher = page.getByRole('combobox', { name: 'Organization' });
      expect(await switcher.inputValue()).toBe(org.name);
      await switcher.click();
      await page.getByRole('option', { name: 'Second Org' }).click();
      expect(await page.evaluate(() => localStorage.getItem('vouch.org'))).toBe(second.id);
      expect(errors).toEqual([]);
      await context.close();
    }
  }, PAGE_TEST_TIMEOUT);

  it('says so when a signed-in person belongs to no organization', async () => {
    const loner = await portalUser(web.database.db);
    const { context, page } = await web.newPage();
    const [name, value] = loner.cookie.split('=');
    await context.addCookies([{ name: name!, value: value!, url: web.baseUrl }]);
    await page.goto('/');
    await page.getByRole('heading', { name: 'You are not in an organization' }).waitFor();
    await context.close();
  }, PAGE_TEST_TIMEOUT);
});

describe('an app whose web app was never built', () => {
  it('answers its page addresses 503 with what to run, and its APIs still 404 in JSON', async () => {
    const app = Fastify();
    registerErrorHandling(app, { accepts: isWebAppPath, answer: await registerWebApp(app, '/nonexistent/web/dist') });
    const page = await app.inject({ url: '/login' });
    expect(page.statusCode).toBe(503);
    expect(page.body).toContain('npm run build');
    const api = await app.inject({ url: '/api/nope' });
    expect(api.statusCode).toBe(404);
    expect(api.json()).toMatchObject({ status: 'error', code: 'NOT_FOUND_ERROR' });
    await app.close();
  });
});
