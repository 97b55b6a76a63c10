import { generate } from 'otplib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestContext, type TestContext } from '../helpers/app.js';
import { enrolTotp, freshCode, portal, portalUser, type PortalUser } from '../helpers/portal.js';

/**
 * The second factor (issue 18, findings 2 and 3): wrong codes are counted on their own and a
 * password never resets them; five lock the second step and end the waiting sign-in; a code works
 * once; recovery codes work once each; turning two-factor on needs the password.
 */
let ctx: TestContext;
beforeAll(async () => {
  ctx = await buildTestContext();
});
afterAll(() => ctx.close());

interface Enrolled extends PortalUser {
  secret: string;
  recoveryCodes: string[];
}

async function enrolled(): Promise<Enrolled> {
  const user = await portalUser(ctx.database.db);
  return { ...user, ...(await enrolTotp(ctx.app, user)) };
}

async function signIn(user: PortalUser, remoteAddress?: string) {
  const res = await portal(ctx.app, undefined, { method: 'POST', url: '/api/auth/sign-in', payload: { email: user.email, password: user.password }, ...(remoteAddress ? { remoteAddress } : {}) });
  const cookie = res.cookies.find((c) => c.name === 'vouch_session');
  return { res, pending: cookie ? { cookie: `vouch_session=${cookie.value}` } : undefined };
}

const totp = (pending: { cookie: string } | undefined, code: string) => portal(ctx.app, pending, { method: 'POST', url: '/api/auth/totp', payload: { code } });

/** A 6-digit code that is not the right one now (nor for the steps either side). */
async function wrongCode(secret: string): Promise<string> {
  const near = await Promise.all([-30, 0, 30].map((d) => generate({ secret, epoch: Math.floor(Date.now() / 1000) + d })));
  for (let n = 0; ; n++) {
    const candidate = String(n).padStart(6, '0');
    if (!near.includes(candidate)) return candidate;
  }
}

describe('wrong second-factor codes', () => {
  it('are counted apart from passwords: signing in again with the password does not reset them, and the fifth locks', async () => {
    const user = await enrolled();
    const wrong = await wrongCode(user.secret);
    const first = await signIn(user);
    expect(first.res.json()).toEqual({ totpRequired: true });
    for (let i = 0; i < 4; i++) expect((await totp(first.pending, wrong)).statusCode).toBe(401);
    // The right password again, a fresh pending sign-in: the four wrong codes still count.
    const second = await signIn(user);
    expect(second.res.statusCode).toBe(200);
    const fifth = await totp(second.pending, wrong);
    expect(fifth.statusCode).toBe(429);
    expect(fifth.json()).toMatchObject({ code: 'RATE_LIMITED', message: expect.stringMatching(/two-factor step of this account is locked for 15 more minute/) });
    expect(Number(fifth.headers['retry-after'])).toBeGreaterThan(800);
    // The waiting sign-in died with the lock, and the right code does not revive it.
    const right = await freshCode(ctx.database.db, user.personId, user.secret);
    expect((await totp(second.pending, right)).statusCode).toBe(401);
    expect((await portal(ctx.app, second.pending, { method: 'GET', url: '/api/me' })).statusCode).toBe(401);
    // A new sign-in with the password is refused while the second step is locked.
    const third = await signIn(user, '10.20.0.2');
    expect(third.res.statusCode).toBe(429);
    expect(third.pending).toBeUndefined();
  });

  it('cannot be guessed in parallel past the count', async () => {
    const user = await enrolled();
    const wrong = await wrongCode(user.secret);
    const { pending } = await signIn(user);
    const answers = await Promise.all(Array.from({ length: 20 }, () => totp(pending, wrong)));
    const checked = answers.filter((res) => /That code is not right/.test(res.json().message));
    expect(checked.length).toBeLessThanOrEqual(4);
    const person = await ctx.database.db.selectFrom('people').select(['totp_failures', 'totp_locked_until']).where('id', '=', user.personId).executeTakeFirstOrThrow();
    expect(person.totp_failures).toBe(5);
    expect(person.totp_locked_until!.getTime()).toBeGreaterThan(Date.now() + 14 * 60_000);
  });

  it('a right code clears the count', async () => {
    const user = await enrolled();
    const wrong = await wrongCode(user.secret);
    const { pending } = await signIn(user);
    for (let i = 0; i < 4; i++) await totp(pending, wrong);
    expect((await totp(pending, await freshCode(ctx.database.db, user.personId, user.secret))).statusCode).toBe(200);
    const again = await signIn(user);
    expect((await totp(again.pending, wrong)).statusCode).toBe(401);
  });
});

describe('a TOTP code', () => {
  it('works once: at sign-in, and when turning two-factor off', async () => {
    const user = await enrolled();
    const code = await freshCode(ctx.database.db, user.personId, user.secret);
    const first = await signIn(user);
    expect((await totp(first.pending, code)).statusCode).toBe(200);
    const second = await signIn(user);
    const replay = await totp(second.pending, code);
    expect(replay.statusCode).toBe(401);
    const off = await portal(ctx.app, first.pending, { method: 'POST', url: '/api/account/totp/disable', payload: { password: user.password, code } });
    expect([off.statusCode, off.json().message]).toEqual([400, expect.stringMatching(/^code is not right/)]);
  });

  it('of the step used when it was turned on does not sign in', async () => {
    const user = await portalUser(ctx.database.db);
    const { secret } = (await portal(ctx.app, user, { method: 'POST', url: '/api/account/totp/setup', payload: {} })).json();
    const code = await generate({ secret });
    expect((await portal(ctx.app, user, { method: 'POST', url: '/api/account/totp/enable', payload: { password: user.password, code } })).statusCode).toBe(200);
    const { pending } = await signIn(user);
    expect((await totp(pending, code)).statusCode).toBe(401);
  });
});

describe('turning two-factor on', () => {
  it('needs the password, signs out the other sessions and answers ten recovery codes', async () => {
    const user = await portalUser(ctx.database.db);
    const other = (await signIn(user)).pending!;
    const { secret } = (await portal(ctx.app, user, { method: 'POST', url: '/api/account/totp/setup', payload: {} })).json();
    const code = await generate({ secret });
    const stolen = await portal(ctx.app, user, { method: 'POST', url: '/api/account/totp/enable', payload: { code } });
    expect(stolen.statusCode).toBe(400);
    const wrongPassword = await portal(ctx.app, user, { method: 'POST', url: '/api/account/totp/enable', payload: { password: 'somebody else', code } });
    expect([wrongPassword.statusCode, wrongPassword.json().message]).toEqual([400, 'password is not your current password']);
    expect((await portal(ctx.app, user, { method: 'GET', url: '/api/me' })).json().person.totpEnabled).toBe(false);
    const on = await portal(ctx.app, user, { method: 'POST', url: '/api/account/totp/enable', payload: { password: user.password, code } });
    expect(on.statusCode).toBe(200);
    const { recoveryCodes } = on.json();
    expect(recoveryCodes).toHaveLength(10);
    expect(new Set(recoveryCodes).size).toBe(10);
    for (const c of recoveryCodes) expect(c).toMatch(/^[a-z2-9]{5}-[a-z2-9]{5}$/);
    expect((await portal(ctx.app, other, { method: 'GET', url: '/api/me' })).statusCode).toBe(401);
    expect((await portal(ctx.app, user, { method: 'GET', url: '/api/me' })).statusCode).toBe(200);
    const stored = await ctx.database.db.selectFrom('totp_recovery_codes').select('code_hash').where('person_id', '=', user.personId).execute();
    expect(stored).toHaveLength(10);
    expect(stored.map((row) => row.code_hash)).not.toContain(recoveryCodes[0]);
  });
});

describe('turning two-factor off', () => {
  it('signs out every other session, a full one and one waiting for its code', async () => {
    const user = await enrolled();
    const other = await signIn(user);
    expect((await totp(other.pending, await freshCode(ctx.database.db, user.personId, user.secret))).statusCode).toBe(200);
    const waiting = await signIn(user);
    expect((await portal(ctx.app, other.pending, { method: 'GET', url: '/api/me' })).statusCode).toBe(200);
    const off = await portal(ctx.app, user, { method: 'POST', url: '/api/account/totp/disable', payload: { password: user.password, code: user.recoveryCodes[0] } });
    expect(off.statusCode).toBe(200);
    expect((await portal(ctx.app, other.pending, { method: 'GET', url: '/api/me' })).statusCode).toBe(401);
    expect((await totp(waiting.pending, await freshCode(ctx.database.db, user.personId, user.secret))).statusCode).toBe(401);
    const me = await portal(ctx.app, user, { method: 'GET', url: '/api/me' });
    expect([me.statusCode, me.json().person.totpEnabled]).toEqual([200, false]);
  });
});

describe('recovery codes', () => {
  it('each sign in once in place of a code; new ones need the password and a code, and end the old ones', async () => {
    const user = await enrolled();
    const [first, second, third] = user.recoveryCodes;
    const a = await signIn(user);
    expect((await totp(a.pending, first!.toUpperCase())).statusCode).toBe(200);
    const b = await signIn(user);
    expect((await totp(b.pending, first!)).statusCode).toBe(401);
    expect((await totp(b.pending, second!.replace('-', ''))).statusCode).toBe(200);

    const noCode = await portal(ctx.app, a.pending, { method: 'POST', url: '/api/account/totp/recovery-codes', payload: { password: user.password, code: '000000' } });
    expect(noCode.statusCode).toBe(400);
    const fresh = await portal(ctx.app, a.pending, {
      method: 'POST',
      url: '/api/account/totp/recovery-codes',
      payload: { password: user.password, code: await freshCode(ctx.database.db, user.personId, user.secret) },
    });
    expect(fresh.statusCode).toBe(200);
    expect(fresh.json().recoveryCodes).toHaveLength(10);
    const c = await signIn(user);
    expect((await totp(c.pending, third!)).statusCode).toBe(401);
    expect((await totp(c.pending, fresh.json().recoveryCodes[0])).statusCode).toBe(200);
  });
});
