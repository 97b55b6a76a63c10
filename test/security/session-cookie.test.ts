import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sessionCookie } from '../../src/portal/sessions.js';
import { buildTestContext, type TestContext } from '../helpers/app.js';
import { portal, portalUser } from '../helpers/portal.js';

/**
 * The session cookie is Secure unless the public URL is plain http on this machine (issue 18): a
 * deployment mistakenly served over http keeps no session rather than sending it in the clear.
 */
let ctx: TestContext;
const PUBLIC_URL = 'http://vouch.example.com';
beforeAll(async () => {
  ctx = await buildTestContext({ config: { publicUrl: PUBLIC_URL } });
});
afterAll(() => ctx.close());

describe('the session cookie', () => {
  it('is Secure when the public URL is plain http on another host', async () => {
    const user = await portalUser(ctx.database.db);
    const res = await portal(ctx.app, undefined, { method: 'POST', url: '/api/auth/sign-in', headers: { origin: PUBLIC_URL }, payload: { email: user.email, password: user.password } });
    expect(res.statusCode, res.body).toBe(200);
    const cookie = String(res.headers['set-cookie']);
    expect(cookie).toMatch(/^vouch_session=/);
    expect(cookie).toMatch(/; Secure/);
    expect(cookie).toMatch(/; HttpOnly/);
  });

  it('is Secure for https and any host but this machine; not for plain http on localhost, 127.0.0.1 or [::1]', () => {
    const secure = (url: string) => sessionCookie(url).secure;
    expect(['https://vouch.example.com', 'https://localhost:8443', 'http://vouch.example.com', 'http://10.0.0.5:8080', 'http://localhost.example.com'].map(secure)).toEqual([true, true, true, true, true]);
    expect(['http://localhost:8080', 'http://127.0.0.1:8080', 'http://[::1]:8080'].map(secure)).toEqual([false, false, false]);
  });
});
