import { generate } from 'otplib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Throttle } from '../../src/portal/auth/throttle.js';
import { listMail } from '../../src/portal/mail.js';
import { SESSION_LIFETIME_MS, sessionCookie } from '../../src/portal/sessions.js';
import { buildTestContext, type TestContext } from '../helpers/app.js';
import { ORIGIN, portal } from '../helpers/portal.js';

let ctx: TestContext;
beforeAll(async () => {
  ctx = await buildTestContext();
});
afterAll(() => ctx.close());

let n = 0;
const email = () => `ada${++n}-${Date.now()}@example.com`;
const PASSWORD = 'a long enough password';

function cookieOf(res: { headers: Record<string, unknown> }): { cookie: string } {
  const header = String(res.headers['set-cookie'] ?? '');
  const match = /vouch_session=([^;]+)/.exec(header);
  if (!match) throw new Error(`no session cookie in ${header}`);
  return { cookie: `vouch_session=${match[1]}` };
}

async function signUp(address = email()) {
  const res = await portal(ctx.app, undefined, {
    method: 'POST',
    url: '/api/auth/sign-up',
    payload: { name: 'Ada Obi', email: address, password: PASSWORD, organizationName: 'Obi Lending' },
  });
  expect(res.statusCode, res.body).toBe(201);
  return { ...res.json(), user: cookieOf(res), email: address };
}

/** The token of the newest mailed link to `to` for `path`. */
async function mailedToken(to: string, path: string): Promise<string> {
  const [mail] = await listMail(ctx.database.db, { to, limit: 1 });
  const match = new RegExp(`${path}\\?token=([A-Za-z0-9_-]+)`).exec(mail?.text ?? '');
  if (!match) throw new Error(`no ${path} link mailed to ${to}`);
  return match[1]!;
}

/** Turns TOTP on for a signed-in person; returns the secret, as their authenticator app holds it. */
async function enableTotp(user: { cookie: string }): Promise<string> {
  const { secret } = (await portal(ctx.app, user, { method: 'POST', url: '/api/account/totp/setup', payload: {} })).json();
  const res = await portal(ctx.app, user, { method: 'POST', url: '/api/account/totp/enable', payload: { code: await generate({ secret }) } });
  expect(res.statusCode).toBe(200);
  return secret;
}

/** Waits for something the app does after its answer (a mail dispatched after the commit). */
async function until<T>(check: () => T | undefined, timeoutMs = 5_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const value = check();
    if (value !== undefined) return value;
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('sign-up', () => {
  it('creates the person, an organization that is not enabled with a zero balance, and signs in', async () => {
    const { orgId, user, email: address } = await signUp();
    const cookie = String(user.cookie);
    expect(cookie).toMatch(/^vouch_session=/);
    const me = (await portal(ctx.app, user, { method: 'GET', url: '/api/me' })).json();
    expect(me.person).toMatchObject({ email: address, name: 'Ada Obi', emailVerified: false, totpEnabled: false });
    expect(me.memberships).toEqual([expect.objectContaining({ orgId, orgName: 'Obi Lending', role: 'owner', enabled: false, consentRequired: false })]);
    const org = await ctx.accounts.get(orgId);
    expect(org).toMatchObject({ enabled: false, balance: 0 });
  });

  it('sets an httpOnly SameSite=Lax cookie', async () => {
    const res = await portal(ctx.app, undefined, {
      method: 'POST',
      url: '/api/auth/sign-up',
      payload: { name: 'B', email: email(), password: PASSWORD, organizationName: 'B Ltd' },
    });
    expect(String(res.headers['set-cookie'])).toMatch(/HttpOnly/);
    expect(String(res.headers['set-cookie'])).toMatch(/SameSite=Lax/);
  });

  it('refuses a taken email (whatever its case), a short password and a bad email, in style A', async () => {
    const { email: address } = await signUp();
    const cases = [
      [{ email: address.toUpperCase(), password: PASSWORD }, 409, /already exists/],
      [{ email: email(), password: 'short' }, 400, /at least 10/],
      [{ email: 'not-an-email', password: PASSWORD }, 400, /email/],
    ] as const;
    for (const [fields, status, message] of cases) {
      const res = await portal(ctx.app, undefined, {
        method: 'POST',
        url: '/api/auth/sign-up',
        payload: { name: 'X', organizationName: 'X', ...fields },
      });
      expect(res.statusCode).toBe(status);
      expect(res.json()).toEqual({ status: 'error', code: expect.any(String), message: expect.stringMatching(message) });
    }
    const missing = await portal(ctx.app, undefined, { method: 'POST', url: '/api/auth/sign-up', payload: { email: email() } });
    expect(missing.statusCode).toBe(400);
    expect(missing.json().message).toMatch(/required/);
  });

  it('names the field: a password that is the email, a blank name or company, an overlong value', async () => {
    const address = email();
    const cases = [
      [{ email: address, password: `  ${address.toUpperCase()} ` }, /^password must not be your email/],
      [{ email: email(), password: PASSWORD, name: '   ' }, /^name must not be empty/],
      [{ email: email(), password: PASSWORD, organizationName: ' ' }, /^organizationName must not be empty/],
      [{ email: email(), password: 'x'.repeat(201) }, /^password must NOT have more than 200 characters/],
    ] as const;
    for (const [fields, message] of cases) {
      const res = await portal(ctx.app, undefined, { method: 'POST', url: '/api/auth/sign-up', payload: { name: 'X', organizationName: 'X', ...fields } });
      expect(res.statusCode, res.body).toBe(400);
      expect(res.json()).toMatchObject({ status: 'error', code: 'VALIDATION_ERROR', message: expect.stringMatching(message) });
    }
    expect(await ctx.database.db.selectFrom('people').select('id').where('email', '=', address).executeTakeFirst()).toBeUndefined();
  });

  it('logs that a mail waits, with the recipient domain only: never the link or the address', async () => {
    const address = email();
    await signUp(address);
    const token = await mailedToken(address, '/verify-email');
    const line = await until(() => ctx.logs.find((l) => l.includes('mail waiting') && l.includes('verify_email')));
    expect(JSON.parse(line)).toMatchObject({ level: 30, domain: 'example.com', msg: expect.stringContaining('vouch mail list') });
    expect(ctx.logs.filter((l) => l.includes(token) || l.includes(address.split('@')[0]!))).toEqual([]);
  });
});

describe('the session cookie', () => {
  it('is httpOnly, SameSite=Lax, for the whole site, as long as the session; Secure behind https', async () => {
    const res = await portal(ctx.app, undefined, { method: 'POST', url: '/api/auth/sign-up', payload: { name: 'C', email: email(), password: PASSWORD, organizationName: 'C Ltd' } });
    const cookie = String(res.headers['set-cookie']);
    expect(cookie).toMatch(/; Max-Age=2592000/);
    expect(cookie).toMatch(/; Path=\//);
    expect(cookie).not.toMatch(/Secure/);
    expect(SESSION_LIFETIME_MS / 1000).toBe(2_592_000);
    expect(sessionCookie('https://vouch.example.com')).toMatchObject({ secure: true, httpOnly: true, sameSite: 'lax', path: '/' });
  });
});

describe('routes of the signed-in person', () => {
  it('answer 401 without a session, in style A', async () => {
    const calls = [
      ['GET', '/api/account/sessions'],
      ['PATCH', '/api/account'],
      ['POST', '/api/account/password'],
      ['POST', '/api/account/totp/setup'],
      ['POST', '/api/account/totp/enable'],
      ['POST', '/api/account/totp/disable'],
      ['POST', '/api/auth/resend-verification'],
      ['DELETE', '/api/account/sessions/00000000-0000-0000-0000-000000000000'],
    ] as const;
    for (const [method, url] of calls) {
      const res = await portal(ctx.app, { cookie: 'vouch_session=AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA' }, { method, url, ...(method === 'GET' || method === 'DELETE' ? {} : { payload: {} }) });
      expect([url, res.statusCode]).toEqual([url, 401]);
      expect(res.json()).toMatchObject({ status: 'error', code: 'ACCESS_DENIED', message: expect.stringMatching(/Sign in/) });
    }
  });

  it('changes the name, refusing a blank one', async () => {
    const { user } = await signUp();
    expect((await portal(ctx.app, user, { method: 'PATCH', url: '/api/account', payload: { name: '  Ada Obi-Eze ' } })).statusCode).toBe(200);
    expect((await portal(ctx.app, user, { method: 'GET', url: '/api/me' })).json().person.name).toBe('Ada Obi-Eze');
    const blank = await portal(ctx.app, user, { method: 'PATCH', url: '/api/account', payload: { name: '   ' } });
    expect(blank.statusCode).toBe(400);
    expect(blank.json().message).toMatch(/^name/);
  });
});

describe('email verification', () => {
  it('verifies with the mailed link once', async () => {
    const { user, email: address } = await signUp();
    const token = await mailedToken(address, '/verify-email');
    const first = await portal(ctx.app, undefined, { method: 'POST', url: '/api/auth/verify-email', payload: { token } });
    expect(first.statusCode).toBe(200);
    expect((await portal(ctx.app, user, { method: 'GET', url: '/api/me' })).json().person.emailVerified).toBe(true);
    const again = await portal(ctx.app, undefined, { method: 'POST', url: '/api/auth/verify-email', payload: { token } });
    expect(again.statusCode).toBe(400);
    expect(again.json().message).toMatch(/already used or expired/);
  });

  it('resends a link while unverified; both links work until one is used; verified answers 409', async () => {
    const { user, email: address } = await signUp();
    const before = await mailedToken(address, '/verify-email');
    const res = await portal(ctx.app, user, { method: 'POST', url: '/api/auth/resend-verification', payload: {} });
    expect(res.statusCode).toBe(200);
    const after = await mailedToken(address, '/verify-email');
    expect(after).not.toBe(before);
    expect((await portal(ctx.app, undefined, { method: 'POST', url: '/api/auth/verify-email', payload: { token: after } })).statusCode).toBe(200);
    const again = await portal(ctx.app, user, { method: 'POST', url: '/api/auth/resend-verification', payload: {} });
    expect(again.statusCode).toBe(409);
    expect(again.json().message).toMatch(/already verified/);
  });

  it('refuses an unknown or expired token with what to do', async () => {
    const { email: address } = await signUp();
    const token = await mailedToken(address, '/verify-email');
    for (const bad of ['', 'nope', 'A'.repeat(43)]) {
      const res = await portal(ctx.app, undefined, { method: 'POST', url: '/api/auth/verify-email', payload: { token: bad } });
      expect(res.statusCode).toBe(400);
      expect(res.json().message).toMatch(/Ask for a new verification email/);
    }
    await ctx.database.db.updateTable('person_tokens').set({ expires_at: new Date(Date.now() - 1000) }).where('purpose', '=', 'verify_email').execute();
    expect((await portal(ctx.app, undefined, { method: 'POST', url: '/api/auth/verify-email', payload: { token } })).statusCode).toBe(400);
  });
});

describe('sign-in', () => {
  it('signs in with the right password and refuses a wrong one or an unknown email alike', async () => {
    const { email: address } = await signUp();
    const ok = await portal(ctx.app, undefined, { method: 'POST', url: '/api/auth/sign-in', payload: { email: address, password: PASSWORD } });
    expect(ok.statusCode).toBe(200);
    expect(ok.json()).toEqual({ totpRequired: false });
    expect((await portal(ctx.app, cookieOf(ok), { method: 'GET', url: '/api/me' })).statusCode).toBe(200);
    for (const payload of [{ email: address, password: 'wrong password!' }, { email: email(), password: PASSWORD }]) {
      const res = await portal(ctx.app, undefined, { method: 'POST', url: '/api/auth/sign-in', payload });
      expect(res.statusCode).toBe(401);
      expect(res.json()).toEqual({ status: 'error', code: 'ACCESS_DENIED', message: 'Wrong email or password' });
    }
  });

  it('locks the account after 5 wrong passwords, even for the right one, with Retry-After', async () => {
    const { email: address } = await signUp();
    const statuses = [];
    for (let i = 0; i < 5; i++) {
      statuses.push((await portal(ctx.app, undefined, { method: 'POST', url: '/api/auth/sign-in', payload: { email: address, password: 'wrong password!' } })).statusCode);
    }
    expect(statuses).toEqual([401, 401, 401, 401, 429]);
    const right = await portal(ctx.app, undefined, { method: 'POST', url: '/api/auth/sign-in', payload: { email: address, password: PASSWORD } });
    expect(right.statusCode).toBe(429);
    expect(right.json()).toMatchObject({ status: 'error', code: 'RATE_LIMITED', message: expect.stringMatching(/locked for 15 more minute/) });
    expect(Number(right.headers['retry-after'])).toBeGreaterThan(800);
    // The lock ends on its own.
    await ctx.database.db.updateTable('people').set({ locked_until: new Date(Date.now() - 1000) }).where('email', '=', address).execute();
    const later = await portal(ctx.app, undefined, { method: 'POST', url: '/api/auth/sign-in', payload: { email: address, password: PASSWORD } });
    expect(later.statusCode).toBe(200);
  });

  it('limits attempts per IP address', async () => {
    const statuses = new Set<number>();
    for (let i = 0; i < 32; i++) {
      const res = await portal(ctx.app, undefined, {
        method: 'POST',
        url: '/api/auth/forgot-password',
        payload: { email: 'nobody@example.com' },
        remoteAddress: '10.9.9.9',
      });
      statuses.add(res.statusCode);
      if (res.statusCode === 429) expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
    }
    expect([...statuses].sort()).toEqual([200, 429]);
  });

  it('counts attempts per IP in fixed windows that end', () => {
    let now = 0;
    const throttle = new Throttle(3, 60_000, () => now);
    expect([throttle.hit('a'), throttle.hit('a'), throttle.hit('a'), throttle.hit('b')]).toEqual([0, 0, 0, 0]);
    now = 15_000;
    expect(throttle.hit('a')).toBe(45);
    now = 60_000;
    expect(throttle.hit('a')).toBe(0);
  });

  it('signs out: the cookie stops working', async () => {
    const { user } = await signUp();
    expect((await portal(ctx.app, user, { method: 'POST', url: '/api/auth/sign-out', payload: {} })).statusCode).toBe(200);
    expect((await portal(ctx.app, user, { method: 'GET', url: '/api/me' })).statusCode).toBe(401);
  });
});

describe('password reset', () => {
  it('mails a single-use link that sets a new password and ends every session', async () => {
    const { user, email: address } = await signUp();
    const unknown = await portal(ctx.app, undefined, { method: 'POST', url: '/api/auth/forgot-password', payload: { email: 'nobody@example.com' } });
    const known = await portal(ctx.app, undefined, { method: 'POST', url: '/api/auth/forgot-password', payload: { email: address } });
    expect([unknown.statusCode, known.body]).toEqual([200, unknown.body]);
    const token = await mailedToken(address, '/reset-password');
    const weak = await portal(ctx.app, undefined, { method: 'POST', url: '/api/auth/reset-password', payload: { token, password: 'short' } });
    expect(weak.statusCode).toBe(400);
    const res = await portal(ctx.app, undefined, { method: 'POST', url: '/api/auth/reset-password', payload: { token, password: 'a brand new password' } });
    expect(res.statusCode).toBe(200);
    expect((await portal(ctx.app, user, { method: 'GET', url: '/api/me' })).statusCode).toBe(401);
    const reuse = await portal(ctx.app, undefined, { method: 'POST', url: '/api/auth/reset-password', payload: { token, password: 'another new password' } });
    expect(reuse.statusCode).toBe(400);
    const signIn = await portal(ctx.app, undefined, { method: 'POST', url: '/api/auth/sign-in', payload: { email: address, password: 'a brand new password' } });
    expect(signIn.statusCode).toBe(200);
  });

  it('refuses an expired link and keeps the old password; unlocks a locked account', async () => {
    const { email: address } = await signUp();
    await portal(ctx.app, undefined, { method: 'POST', url: '/api/auth/forgot-password', payload: { email: address } });
    const token = await mailedToken(address, '/reset-password');
    await ctx.database.db.updateTable('person_tokens').set({ expires_at: new Date(Date.now() - 1000) }).where('purpose', '=', 'reset_password').execute();
    const expired = await portal(ctx.app, undefined, { method: 'POST', url: '/api/auth/reset-password', payload: { token, password: 'a brand new password' } });
    expect(expired.statusCode).toBe(400);
    expect(expired.json().message).toMatch(/Ask for a new reset link/);
    await ctx.database.db.updateTable('people').set({ locked_until: new Date(Date.now() + 60_000) }).where('email', '=', address).execute();
    await portal(ctx.app, undefined, { method: 'POST', url: '/api/auth/forgot-password', payload: { email: address.toUpperCase() } });
    const fresh = await mailedToken(address, '/reset-password');
    expect((await portal(ctx.app, undefined, { method: 'POST', url: '/api/auth/reset-password', payload: { token: fresh, password: 'a brand new password' } })).statusCode).toBe(200);
    const signIn = await portal(ctx.app, undefined, { method: 'POST', url: '/api/auth/sign-in', payload: { email: address, password: 'a brand new password' } });
    expect(signIn.statusCode).toBe(200);
  });
});

describe('two-factor and sessions', () => {
  it('sets up TOTP, then sign-in needs a code; a pending session can do nothing else', async () => {
    const { user, email: address } = await signUp();
    const setup = await portal(ctx.app, user, { method: 'POST', url: '/api/account/totp/setup', payload: {} });
    expect(setup.statusCode).toBe(200);
    const { secret, qrDataUrl, otpauthUrl } = setup.json();
    expect(qrDataUrl).toMatch(/^data:image\/png;base64,/);
    expect(otpauthUrl).toMatch(/^otpauth:\/\/totp\/Vouch/);
    const wrong = await portal(ctx.app, user, { method: 'POST', url: '/api/account/totp/enable', payload: { code: '000000' } });
    expect(wrong.statusCode).toBe(400);
    const enable = await portal(ctx.app, user, { method: 'POST', url: '/api/account/totp/enable', payload: { code: await generate({ secret }) } });
    expect(enable.statusCode).toBe(200);

    const signIn = await portal(ctx.app, undefined, { method: 'POST', url: '/api/auth/sign-in', payload: { email: address, password: PASSWORD } });
    expect(signIn.json()).toEqual({ totpRequired: true });
    const pending = cookieOf(signIn);
    const blocked = await portal(ctx.app, pending, { method: 'GET', url: '/api/me' });
    expect(blocked.statusCode).toBe(401);
    expect(blocked.json().message).toMatch(/authenticator/);
    expect((await portal(ctx.app, pending, { method: 'POST', url: '/api/auth/totp', payload: { code: '123456' } })).statusCode).toBe(401);
    const done = await portal(ctx.app, pending, { method: 'POST', url: '/api/auth/totp', payload: { code: await generate({ secret }) } });
    expect(done.statusCode).toBe(200);
    expect((await portal(ctx.app, pending, { method: 'GET', url: '/api/me' })).json().person.totpEnabled).toBe(true);
  });

  it('a sign-in waiting for its code lasts 10 minutes; the code makes it a full session', async () => {
    const { user, email: address } = await signUp();
    const secret = await enableTotp(user);
    const started = Date.now();
    const pending = cookieOf(await portal(ctx.app, undefined, { method: 'POST', url: '/api/auth/sign-in', payload: { email: address, password: PASSWORD } }));
    const expiry = async () =>
      (await ctx.database.db.selectFrom('portal_sessions').select('expires_at').where('pending_totp', '=', true).orderBy('created_at', 'desc').executeTakeFirstOrThrow()).expires_at.getTime();
    const pendingExpiry = await expiry();
    expect(pendingExpiry - started).toBeGreaterThan(9 * 60_000);
    expect(pendingExpiry - started).toBeLessThan(11 * 60_000);
    expect((await portal(ctx.app, pending, { method: 'POST', url: '/api/auth/totp', payload: { code: await generate({ secret }) } })).statusCode).toBe(200);
    const session = await ctx.database.db.selectFrom('portal_sessions').select('expires_at').orderBy('created_at', 'desc').executeTakeFirstOrThrow();
    expect(session.expires_at.getTime() - started).toBeGreaterThan(SESSION_LIFETIME_MS - 60_000);
  });

  it('wrong codes count towards the lockout, so the password alone cannot guess the code', async () => {
    const { user, email: address } = await signUp();
    const secret = await enableTotp(user);
    const pending = cookieOf(await portal(ctx.app, undefined, { method: 'POST', url: '/api/auth/sign-in', payload: { email: address, password: PASSWORD } }));
    const right = await generate({ secret });
    const wrong = right === '000000' ? '000001' : '000000';
    const statuses = [];
    for (let i = 0; i < 5; i++) {
      statuses.push((await portal(ctx.app, pending, { method: 'POST', url: '/api/auth/totp', payload: { code: wrong } })).statusCode);
    }
    expect(statuses).toEqual([401, 401, 401, 401, 429]);
    const locked = await portal(ctx.app, pending, { method: 'POST', url: '/api/auth/totp', payload: { code: right } });
    expect(locked.statusCode).toBe(429);
    expect(Number(locked.headers['retry-after'])).toBeGreaterThan(800);
    expect(locked.json().message).toMatch(/locked for 15 more minute\(s\), until \d\d:\d\d UTC/);
    expect((await portal(ctx.app, pending, { method: 'GET', url: '/api/me' })).statusCode).toBe(401);
  });

  it('turns TOTP off with the password and a current code only', async () => {
    const { user, email: address } = await signUp();
    const secret = await enableTotp(user);
    expect((await portal(ctx.app, user, { method: 'POST', url: '/api/account/totp/setup', payload: {} })).statusCode).toBe(409);
    const code = await generate({ secret });
    const badPassword = await portal(ctx.app, user, { method: 'POST', url: '/api/account/totp/disable', payload: { password: 'not my password', code } });
    expect([badPassword.statusCode, badPassword.json().message]).toEqual([400, expect.stringMatching(/^password/)]);
    const badCode = await portal(ctx.app, user, { method: 'POST', url: '/api/account/totp/disable', payload: { password: PASSWORD, code: '12' } });
    expect([badCode.statusCode, badCode.json().message]).toEqual([400, expect.stringMatching(/^code/)]);
    expect((await portal(ctx.app, user, { method: 'POST', url: '/api/account/totp/disable', payload: { password: PASSWORD, code } })).statusCode).toBe(200);
    expect((await portal(ctx.app, user, { method: 'POST', url: '/api/account/totp/disable', payload: { password: PASSWORD, code } })).statusCode).toBe(409);
    const signIn = await portal(ctx.app, undefined, { method: 'POST', url: '/api/auth/sign-in', payload: { email: address, password: PASSWORD } });
    expect(signIn.json()).toEqual({ totpRequired: false });
  });

  it('enabling needs a started setup', async () => {
    const { user } = await signUp();
    const res = await portal(ctx.app, user, { method: 'POST', url: '/api/account/totp/enable', payload: { code: '123456' } });
    expect(res.statusCode).toBe(400);
    expect(res.json().message).toMatch(/Start the setup first/);
  });

  it('revoking this device signs out: the cookie is cleared and stops working', async () => {
    const { user } = await signUp();
    const [current] = (await portal(ctx.app, user, { method: 'GET', url: '/api/account/sessions' })).json().data;
    expect(current.current).toBe(true);
    const res = await portal(ctx.app, user, { method: 'DELETE', url: `/api/account/sessions/${current.id}` });
    expect(res.statusCode).toBe(200);
    expect(String(res.headers['set-cookie'])).toMatch(/vouch_session=;.*Expires=Thu, 01 Jan 1970/);
    expect((await portal(ctx.app, user, { method: 'GET', url: '/api/me' })).statusCode).toBe(401);
    expect((await portal(ctx.app, user, { method: 'DELETE', url: '/api/account/sessions/not-a-uuid' })).statusCode).toBe(401);
  });

  it('lists signed-in devices and revokes one; another person cannot revoke it', async () => {
    const { user, email: address } = await signUp();
    const second = cookieOf(
      await portal(ctx.app, undefined, {
        method: 'POST',
        url: '/api/auth/sign-in',
        payload: { email: address, password: PASSWORD },
        headers: { origin: ORIGIN, 'user-agent': 'PhoneBrowser/1.0' },
      }),
    );
    const list = (await portal(ctx.app, user, { method: 'GET', url: '/api/account/sessions' })).json().data;
    expect(list).toHaveLength(2);
    const other = list.find((s: { current: boolean }) => !s.current);
    expect(other.userAgent).toBe('PhoneBrowser/1.0');
    const stranger = (await signUp()).user;
    expect((await portal(ctx.app, stranger, { method: 'DELETE', url: `/api/account/sessions/${other.id}` })).statusCode).toBe(404);
    expect((await portal(ctx.app, user, { method: 'DELETE', url: `/api/account/sessions/${other.id}` })).statusCode).toBe(200);
    expect((await portal(ctx.app, second, { method: 'GET', url: '/api/me' })).statusCode).toBe(401);
    expect((await portal(ctx.app, user, { method: 'GET', url: '/api/me' })).statusCode).toBe(200);
  });

  it('changes the password with the current one; other devices are signed out', async () => {
    const { user, email: address } = await signUp();
    const other = cookieOf(await portal(ctx.app, undefined, { method: 'POST', url: '/api/auth/sign-in', payload: { email: address, password: PASSWORD } }));
    const wrong = await portal(ctx.app, user, { method: 'POST', url: '/api/account/password', payload: { currentPassword: 'nope nope nope', newPassword: 'the next password' } });
    expect([wrong.statusCode, wrong.json().message]).toEqual([400, 'currentPassword is not your current password']);
    for (const [newPassword, message] of [['short', /^newPassword must be at least 10/], [PASSWORD, /^newPassword must differ/]] as const) {
      const res = await portal(ctx.app, user, { method: 'POST', url: '/api/account/password', payload: { currentPassword: PASSWORD, newPassword } });
      expect([res.statusCode, res.json().message]).toEqual([400, expect.stringMatching(message)]);
    }
    const ok = await portal(ctx.app, user, { method: 'POST', url: '/api/account/password', payload: { currentPassword: PASSWORD, newPassword: 'the next password' } });
    expect(ok.statusCode).toBe(200);
    expect((await portal(ctx.app, other, { method: 'GET', url: '/api/me' })).statusCode).toBe(401);
    expect((await portal(ctx.app, user, { method: 'GET', url: '/api/me' })).statusCode).toBe(200);
  });
});
