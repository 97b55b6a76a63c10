import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildWebContext, type WebContext } from '../helpers/browser.js';
import { portalOrg, type PortalUser } from '../helpers/portal.js';

/**
 * After signing in, `next` leads only to a page of the app itself (issue 18, finding 8): a
 * `next` that a browser would resolve to another origin (`/\evil.example`, `//evil`, an absolute
 * URL, a tab inside the slashes, `javascript:`) leads home instead. In Chromium, which does the
 * resolving an attacker counts on.
 */
let web: WebContext;
let owner: PortalUser;
beforeAll(async () => {
  web = await buildWebContext();
  owner = (await portalOrg(web.database.db)).owner;
}, 90_000);
afterAll(() => web?.close());

async function signInWithNext(next: string): Promise<string> {
  const { context, page } = await web.newPage();
  try {
    await page.goto(`/login?next=${encodeURIComponent(next)}`);
    await page.getByLabel('Email').fill(owner.email);
    await page.getByLabel(/^Password/).fill(owner.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL((url) => !url.pathname.startsWith('/login'), { timeout: 15_000 });
    await page.waitForLoadState('domcontentloaded').catch(() => undefined);
    return page.url();
  } finally {
    await context.close();
  }
}

describe('the next page after signing in', () => {
  it.each(['/\\evil.example/x', '//evil.example/x', 'https://evil.example/x', '/\t/evil.example/x', 'javascript:alert(document.domain)', '\\\\evil.example'])(
    'stays on the app for next=%j',
    { timeout: 60_000 },
    async (next) => {
      const landed = await signInWithNext(next);
      expect(new URL(landed).origin).toBe(web.baseUrl);
      expect(new URL(landed).pathname).toBe('/');
    },
  );

  it('is a page of the app when next names one', { timeout: 60_000 }, async () => {
    const landed = new URL(await signInWithNext('/account?tab=security#two-factor'));
    expect([landed.origin, landed.pathname, landed.search, landed.hash]).toEqual([web.baseUrl, '/account', '?tab=security', '#two-factor']);
  });
});
