import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildWebContext, watchErrors, type WebContext } from '../helpers/browser.js';
import { portal, portalUser } from '../helpers/portal.js';

/**
 * Opening the portal, the console or the sign-in page signed out logs nothing red in the browser's
 * console (issue 19, item 11): the web app asks whether there is a session with a question whose
 * answer is 200 either way, and asks for the person only when there is one.
 */
describe('a signed-out first load', () => {
  let web: WebContext;
  beforeAll(async () => {
    web = await buildWebContext();
  }, 90_000);
  afterAll(() => web?.close());

  it('answers GET /api/session 200 signed out and signed in', async () => {
    const out = await portal(web.app, undefined, { method: 'GET', url: '/api/session' });
    expect({ status: out.statusCode, body: out.json() }).toEqual({ status: 200, body: { signedIn: false } });
    const stale = await portal(web.app, { cookie: 'vouch_session=not-a-session' }, { method: 'GET', url: '/api/session' });
    expect({ status: stale.statusCode, body: stale.json() }).toEqual({ status: 200, body: { signedIn: false } });
    const user = await portalUser(web.database.db);
    const signedIn = await portal(web.app, user, { method: 'GET', url: '/api/session' });
    expect({ status: signedIn.statusCode, body: signedIn.json() }).toEqual({ status: 200, body: { signedIn: true } });
  });

  for (const [path, landing] of [['/login', /\/login/], ['/', /\/login/], ['/console', /\/login/], ['/verifications', /\/login/]] as const) {
    it(`logs no console error on ${path} and lands on the sign-in page`, async () => {
      const { context, page } = await web.newPage();
      const errors = watchErrors(page);
      const failed: string[] = [];
      page.on('response', (response) => {
        if (response.status() >= 400) failed.push(`${response.status()} ${response.url()}`);
      });
      await page.goto(path);
      await page.waitForURL(landing);
      await page.getByRole('button', { name: /sign in/i }).waitFor();
      await page.waitForLoadState('networkidle');
      expect(errors).toEqual([]);
      expect(failed).toEqual([]);
      await context.close();
    });
  }
});
