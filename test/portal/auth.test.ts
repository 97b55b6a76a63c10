import { generate } from 'otplib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listMail } from '../../src/portal/mail.js';
import { insertPerson } from '../../src/portal/people.js';
import { createSession, SESSION_COOKIE, SESSION_LIFETIME_MS, sessionCookie } from '../../src/portal/sessions.js';
import { buildTestContext, type TestContext } from '../helpers/app.js';
import { freshCode, ORIGIN, portal } from '../helpers/portal.js';

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

/** A sign-up finished from its mailed link, as a person does it: the account, signed in. */
async function signUp(address = email()) {
  const res = await portal(ctx.app, undefined, {
    method: 'POST',
    url: '/api/auth/sign-up',
    payload: { name: 'Ada Obi', email: address, organizationName: 'Obi Lending' },
  });
  expect(res.statusCode, res.body).toBe(202);
  // No mail server in these tests: the answer says the message was kept for the operator.
  expect(res.json()).toEqual({ ok: true, delivery: 'kept' });
  const token = await mailedToken(address, '/complete-sign-up');
  const done = await portal(ctx.app, undefined, { method: 'POST', url: '/api/auth/complete-sign-up', payload: { token, password: PASSWORD } });
  expect(done.statusCode, done.body).toBe(201);
  return { ...(done.json() as { personId: string; orgId: string }), user: cookieOf(done), email: address, response: done };
}

/** The token of the newest mailed link to `to` for `path` (mails are prepared after the answer). */
async function mailedToken(to: string, path: string, after = 0): Promise<string> {
  const pattern = new RegExp(`${path}\\?token=([A-Za-z0-9_-]+)`);
  return until(async () => {
    const [mail] = await listMail(ctx.database.db, { to, limit: 1 });
    return mail && mail.id > after ? pattern.exec(mail.text)?.[1] : undefined;
  });
}

/** A signed-in person whose email is not verified yet (made before sign-ups were verified by their link). */
async function unverifiedUser() {
  const address = email();
  const personId = await insertPerson(ctx.database.db, { email: address, name: 'Ada Obi', password: PASSWORD });
  const { token } = await createSession(ctx.database.db, { personId });
  return { personId, email: address, user: { cookie: `${SESSION_COOKIE}=${token}` } };
}

/** Turns TOTP on for a signed-in person; returns the secret, as their authenticator app holds it. */
async function enableTotp(user: { cookie: string }): Promise<string> {
  const { secret } = (await portal(ctx.app, user, { method: 'POST', url: '/api/account/totp/setup', payload: {} })).json();
  const res = await portal(ctx.app, user, { method: 'POST', url: '/api/account/totp/enable', payload: { password: PASSWORD, code: await generate({ secret }) } });
  expect(res.statusCode, res.body).toBe(200);
  return secret;
}

async function personId(address: string): Promise<string> {
  return (await ctx.database.db.selectFrom('people').select('id').where('email', '=', address).executeTakeFirstOrThrow()).id;
}

/** Waits for something the app does after its answer (a mail dispatched after the commit). */
async function until<T>(check: () => T | undefined | Promise<T | undefined>, timeoutMs = 5_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
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
    // The mailed link proved the address.
    expect(me.person).toMatchObject({ email: address, name: 'Ada Obi', emailVerified: true, totpEnabled: false });
    expect(me.memberships).toEqual([expect.objectContaining({ orgId, orgName: 'Obi Lending', role: 'owner', enabled: false, consentRequired: false })]);
    const org = await ctx.accounts.get(orgId);
    expect(org).toMatchObject({ enabled: false, balance: 0 });
  });

  it('starts no session until the link is opened; then sets an httpOnly SameSite=Lax cookie', async () => {
    const started = await portal(ctx.app, undefined, { method: 'POST', url: '/api/auth/sign-up', payload: { name: 'B', email: email(), organizationName: 'B Ltd' } });
    expect(started.headers['set-cookie']).toBeUndefined();
    const res = (await signUp()).response;
    expect(String(res.headers['set-cookie'])).toMatch(/HttpOnly/);
    expect(String(res.headers['set-cookie'])).toMatch(/SameSite=Lax/);
  });

  it('mails one address at most five sign-up mails a day, and answers every request alike', async () => {
    const address = email();
    for (let i = 0; i < 7; i++) {
      const res = await portal(ctx.app, undefined, { method: 'POST', url: '/api/auth/sign-up', payload: { name: `Try ${i}`, organizationName: 'X', email: address } });
      expect([res.statusCode, res.json()]).toEqual([202, { ok: true, delivery: 'kept' }]);
    }
    await until(async () => ((await listMail(ctx.database.db, { to: address })).length >= 5 ? true : undefined));
    await new Promise((resolve) => setTimeout(resolve, 300));
    const mails = await listMail(ctx.database.db, { to: address });
    expect(mails).toHaveLength(5);
    expect(new Set(mails.map((m) => /^Hello Try \d,$/.exec(m.text.split('\n')[0]!)?.[0])).size).toBe(5);
  });

  it('refuses a bad email or a missing field, in style A', async () => {
    const bad = await portal(ctx.app, undefined, { method: 'POST', url: '/api/auth/sign-up', payload: { name: 'X', organizationName: 'X', email: 'not-an-email' } });
    expect(bad.statusCode).toBe(400);
    expect(bad.json()).toEqual({ status: 'error', code: 'VALIDATION_ERROR', message: expect.stringMatching(/^email/) , requestId: expect.stringMatching(/^req_/) });
    const missing = await portal(ctx.app, undefined, { method: 'POST', url: '/api/auth/sign-up', payload: { email: email() } });
    expect(missing.statusCode).toBe(400);
    expect(missing.json().message).toMatch(/required/);
  });

  it('names the field: a blank name or company; at the link, a short password, one that is the email, an overlong one', async () => {
    const blanks = [
      [{ name: '   ', organizationName: 'X' }, /^name must not be empty/],
      [{ name: 'X', organizationName: ' ' }, /^organizationName must not be empty/],
      // Both are written into the mail to that address: no paragraphs of the sender's own.
      [{ name: 'customer.\n\nALERT: your BVN check failed. Re-verify at https://x.example', organizationName: 'X' }, /^name must be on one line \(no line breaks\)$/],
      [{ name: 'X', organizationName: 'X\r\nLtd' }, /^organizationName must be on one line/],
    ] as const;
    for (const [fields, message] of blanks) {
      const res = await portal(ctx.app, undefined, { method: 'POST', url: '/api/auth/sign-up', payload: { email: email(), ...fields } });
      expect(res.statusCode, res.body).toBe(400);
      expect(res.json()).toMatchObject({ status: 'error', code: 'VALIDATION_ERROR', message: expect.stringMatching(message) });
    }
    const address = email();
    await portal(ctx.app, undefined, { method: 'POST', url: '/api/auth/sign-up', payload: { name: 'X', organizationName: 'X', email: address } });
    const token = await mailedToken(address, '/complete-sign-up');
    const cases = [
      [`  ${address.toUpperCase()} `, /^password must not be your email/],
      ['short', /^password must be at least 10/],
      ['x'.repeat(201), /^password must NOT have more than 200 characters/],
    ] as const;
    for (const [password, message] of cases) {
      const res = await portal(ctx.app, undefined, { method: 'POST', url: '/api/auth/complete-sign-up', payload: { token, password } });
      expect(res.statusCode, res.body).toBe(400);
      expect(res.json()).toMatchObject({ status: 'error', code: 'VALIDATION_ERROR', message: expect.stringMatching(message) });
    }
    expect(await ctx.database.db.selectFrom('people').select('id').where('email', '=', address).executeTakeFirst()).toBeUndefined();
    // The link still works after refused passwords, once.
    expect((await portal(ctx.app, undefined, { method: 'POST', url: '/api/auth/complete-sign-up', payload: { token, password: PASSWORD } })).statusCode).toBe(201);
    const again = await portal(ctx.app, undefined, { method: 'POST', url: '/api/auth/complete-sign-up', payload: { token, password: PASSWORD } });
    expect([again.statusCode, again.json().message]).toEqual([400, expect.stringMatching(/already used or expired/)]);
  });

  it('logs that a mail waits, with the recipient domain only: never the link or the address', async () => {
    const address = email();
    await signUp(address);
    const token = await mailedToken(address, '/complete-sign-up');
    const line = await until(() => ctx.logs.find((l) => l.includes('mail waiting') && l.includes('complete_sign_up')));
    expect(JSON.parse(line)).toMatchObject({ level: 30, domain: 'example.com', msg: expect.stringContaining('vouch mail list') });
    expect(ctx.logs.filter((l) => l.includes(token) || l.includes(address.split('@')[0]!))).toEqual([]);
  });
});

describe('the session cookie', () => {
  it('is httpOnly, SameSite=Lax, for the whole site, as long as the session; Secure behind https', async () => {
    const res = (await signUp()).response;
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
    // Invitations mail the inviter's name: one line.
    const twoLines = await portal(ctx.app, user, { method: 'PATCH', url: '/api/account', payload: { name: 'Ada\nClick https://x.example' } });
    expect([twoLines.statusCode, twoLines.json().message]).toEqual([400, 'name must be on one line (no line breaks)']);
    expect((await portal(ctx.app, user, { method: 'GET', url: '/api/me' })).json().person.name).toBe('Ada Obi-Eze');
  });
});

describe('email verification', () => {
  it('verifies with the mailed link once', async () => {
    const { user, email: address } = await unverifiedUser();
    expect((await portal(ctx.app, user, { method: 'POST', url: '/api/auth/resend-verification', payload: {} })).statusCode).toBe(200);
    const token = await mailedToken(address, '/verify-email');
    const first = await portal(ctx.app, undefined, { method: 'POST', url: '/api/auth/verify-email', payload: { token } });
    expect(first.statusCode).toBe(200);
    expect((await portal(ctx.app, user, { method: 'GET', url: '/api/me' })).json().person.emailVerified).toBe(true);
    const again = await portal(ctx.app, undefined, { method: 'POST', url: '/api/auth/verify-email', payload: { token } });
    expect(again.statusCode).toBe(400);
    expect(again.json().message).toMatch(/already used or expired/);
  });

  it('resends a link while unverified; both links work until one is used; verified answers 409', async () => {
    const { user, email: address } = await unverifiedUser();
    await portal(ctx.app, user, { method: 'POST', url: '/api/auth/resend-verification', payload: {} });
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
    const { user, email: address } = await unverifiedUser();
    await portal(ctx.app, user, { method: 'POST', url: '/api/auth/resend-verification', payload: {} });
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
      expect(res.json()).toEqual({ status: 'error', code: 'ACCESS_DENIED', message: 'Wrong email or password' , requestId: expect.stringMatching(/^req_/) });
    }
  });

  it('pauses an address after 5 wrong passwords for the email, even for the right one, with Retry-After', async () => {
    const { email: address } = await signUp();
    const statuses = [];
    const from = '10.7.7.7';
    for (let i = 0; i < 5; i++) {
      statuses.push((await portal(ctx.app, undefined, { method: 'POST', url: '/api/auth/sign-in', payload: { email: address, password: 'wrong password!' }, remoteAddress: from })).statusCode);
    }
    expect(statuses).toEqual([401, 401, 401, 401, 429]);
    const right = await portal(ctx.app, undefined, { method: 'POST', url: '/api/auth/sign-in', payload: { email: address, password: PASSWORD }, remoteAddress: from });
    expect(right.statusCode).toBe(429);
    expect(right.json()).toMatchObject({ status: 'error', code: 'RATE_LIMITED', message: expect.stringMatching(/paused for 15 more minute/) });
    expect(Number(right.headers['retry-after'])).toBeGreaterThan(800);
    // The pause ends on its own.
    await ctx.database.db.updateTable('auth_counters').set({ window_ends_at: new Date(Date.now() - 1000) }).execute();
    const later = await portal(ctx.app, undefined, { method: 'POST', url: '/api/auth/sign-in', payload: { email: address, password: PASSWORD }, remoteAddress: from });
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

  it('refuses an expired link and keeps the old password; a reset lifts the pause of an address', async () => {
    const { email: address } = await signUp();
    await portal(ctx.app, undefined, { method: 'POST', url: '/api/auth/forgot-password', payload: { email: address } });
    const token = await mailedToken(address, '/reset-password');
    await ctx.database.db.updateTable('person_tokens').set({ expires_at: new Date(Date.now() - 1000) }).where('purpose', '=', 'reset_password').execute();
    const expired = await portal(ctx.app, undefined, { method: 'POST', url: '/api/auth/reset-password', payload: { token, password: 'a brand new password' } });
    expect(expired.statusCode).toBe(400);
    expect(expired.json().message).toMatch(/Ask for a new reset link/);
    const from = '10.8.8.8';
    for (let i = 0; i < 5; i++) await portal(ctx.app, undefined, { method: 'POST', url: '/api/auth/sign-in', payload: { email: address, password: 'wrong password!' }, remoteAddress: from });
    const [last] = await listMail(ctx.database.db, { to: address, limit: 1 });
    await portal(ctx.app, undefined, { method: 'POST', url: '/api/auth/forgot-password', payload: { email: address.toUpperCase() } });
    const fresh = await mailedToken(address, '/reset-password', last!.id);
    expect((await portal(ctx.app, undefined, { method: 'POST', url: '/api/auth/reset-password', payload: { token: fresh, password: 'a brand new password' } })).statusCode).toBe(200);
    const signIn = await portal(ctx.app, undefined, { method: 'POST', url: '/api/auth/sign-in', payload: { email: address, password: 'a brand new password' }, remoteAddress: from });
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
    const code = await generate({ secret });
    const noPassword = await portal(ctx.app, user, { method: 'POST', url: '/api/account/totp/enable', payload: { password: 'not my password', code } });
    expect([noPassword.statusCode, noPassword.json().message]).toEqual([400, expect.stringMatching(/^password/)]);
    const enable = await portal(ctx.app, user, { method: 'POST', url: '/api/account/totp/enable', payload: { password: PASSWORD, code } });
    expect(enable.statusCode).toBe(200);
    expect(enable.json().recoveryCodes).toHaveLength(10);

    const signIn = await portal(ctx.app, undefined, { method: 'POST', url: '/api/auth/sign-in', payload: { email: address, password: PASSWORD } });
    expect(signIn.json()).toEqual({ totpRequired: true });
    const pending = cookieOf(signIn);
    const blocked = await portal(ctx.app, pending, { method: 'GET', url: '/api/me' });
    expect(blocked.statusCode).toBe(401);
    expect(blocked.json().message).toMatch(/authenticator/);
    expect((await portal(ctx.app, pending, { method: 'POST', url: '/api/auth/totp', payload: { code: '123456' } })).statusCode).toBe(401);
    const done = await portal(ctx.app, pending, { method: 'POST', url: '/api/auth/totp', payload: { code: await freshCode(ctx.database.db, await personId(address), secret) } });
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
    expect((await portal(ctx.app, pending, { method: 'POST', url: '/api/auth/totp', payload: { code: await freshCode(ctx.database.db, await personId(address), secret) } })).statusCode).toBe(200);
    const session = await ctx.database.db.selectFrom('portal_sessions').select('expires_at').orderBy('created_at', 'desc').executeTakeFirstOrThrow();
    expect(session.expires_at.getTime() - started).toBeGreaterThan(SESSION_LIFETIME_MS - 60_000);
  });

  it('wrong codes count towards a lock of the second step, so the password alone cannot guess the code', async () => {
    const { user, email: address } = await signUp();
    const secret = await enableTotp(user);
    const pending = cookieOf(await portal(ctx.app, undefined, { method: 'POST', url: '/api/auth/sign-in', payload: { email: address, password: PASSWORD } }));
    const right = await freshCode(ctx.database.db, await personId(address), secret);
    const wrong = right === '000000' ? '000001' : '000000';
    const statuses = [];
    for (let i = 0; i < 5; i++) {
      statuses.push((await portal(ctx.app, pending, { method: 'POST', url: '/api/auth/totp', payload: { code: wrong } })).statusCode);
    }
    expect(statuses).toEqual([401, 401, 401, 401, 429]);
    // The waiting sign-in ended with the lock; a new one is refused until the lock ends.
    expect((await portal(ctx.app, pending, { method: 'POST', url: '/api/auth/totp', payload: { code: right } })).statusCode).toBe(401);
    const locked = await portal(ctx.app, undefined, { method: 'POST', url: '/api/auth/sign-in', payload: { email: address, password: PASSWORD } });
    expect(locked.statusCode).toBe(429);
    expect(Number(locked.headers['retry-after'])).toBeGreaterThan(800);
    expect(locked.json().message).toMatch(/locked for 15 more minute\(s\), until \d\d:\d\d UTC/);
    expect((await portal(ctx.app, pending, { method: 'GET', url: '/api/me' })).statusCode).toBe(401);
  });

  it('turns TOTP off with the password and a current code only', async () => {
    const { user, email: address } = await signUp();
    const secret = await enableTotp(user);
    expect((await portal(ctx.app, user, { method: 'POST', url: '/api/account/totp/setup', payload: {} })).statusCode).toBe(409);
    const code = await freshCode(ctx.database.db, await personId(address), secret);
    const badPassword = await portal(ctx.app, user, { method: 'POST', url: '/api/account/totp/disable', payload: { password: 'not my password', code } });
    expect([badPassword.statusCode, badPassword.json().message]).toEqual([400, expect.stringMatching(/^password/)]);
    const badCode = await portal(ctx.app, user, { method: 'POST', url: '/api/account/totp/disable', payload: { password: PASSWORD, code: '12' } });
    expect([badCode.statusCode, badCode.json().message]).toEqual([400, expect.stringMatching(/^code/)]);
    expect((await portal(ctx.app, user, { method: 'POST', url: '/api/account/totp/disable', payload: { password: PASSWORD, code } })).statusCode).toBe(200);
    expect((await portal(ctx.app, user, { method: 'POST', url: '/api/account/totp/disable', payload: { password: PASSWORD, code: await generate({ secret }) } })).statusCode).toBe(409);
    const signIn = await portal(ctx.app, undefined, { method: 'POST', url: '/api/auth/sign-in', payload: { email: address, password: PASSWORD } });
    expect(signIn.json()).toEqual({ totpRequired: false });
  });

  it('enabling needs a started setup', async () => {
    const { user } = await signUp();
    const res = await portal(ctx.app, user, { method: 'POST', url: '/api/account/totp/enable', payload: { password: PASSWORD, code: '123456' } });
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
