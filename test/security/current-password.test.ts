import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSession, SESSION_COOKIE } from '../../src/portal/sessions.js';
import { buildTestContext, type TestContext } from '../helpers/app.js';
import { enrolTotp, freshCode, portal, portalUser, type PortalUser } from '../helpers/portal.js';

/**
 * The password asked again of a signed-in person (changing it, turning two-factor on or off, new
 * recovery codes): every attempt counts, so a stolen session cannot guess it. The fifth wrong one in
 * 15 minutes signs out the device that made it and pauses these changes for the person on every
 * device; signing in is not affected, and the right password clears the count.
 */
let ctx: TestContext;
beforeAll(async () => {
  ctx = await buildTestContext();
});
afterAll(() => ctx.close());

const WRONG = 'not the password at all';

/** Another signed-in device of the same person. */
async function otherDevice(user: PortalUser): Promise<PortalUser> {
  const { token } = await createSession(ctx.database.db, { personId: user.personId });
  return { ...user, cookie: `${SESSION_COOKIE}=${token}` };
}

const changePassword = (user: PortalUser, currentPassword: string, newPassword = 'a brand new passphrase') =>
  portal(ctx.app, user, { method: 'POST', url: '/api/account/password', payload: { currentPassword, newPassword } });
const me = (user: PortalUser) => portal(ctx.app, user, { method: 'GET', url: '/api/me' });
const signIn = (user: PortalUser, password: string) => portal(ctx.app, undefined, { method: 'POST', url: '/api/auth/sign-in', payload: { email: user.email, password } });

describe('the current password asked again', () => {
  it('pauses after the fifth wrong one: that device is signed out, every other is refused, signing in still works', async () => {
    const user = await portalUser(ctx.database.db);
    const other = await otherDevice(user);
    for (let i = 0; i < 4; i++) {
      const wrong = await changePassword(user, WRONG);
      expect([wrong.statusCode, wrong.json().message]).toEqual([400, 'currentPassword is not your current password']);
    }
    const fifth = await changePassword(user, WRONG);
    expect(fifth.statusCode).toBe(429);
    expect(fifth.json()).toMatchObject({ code: 'RATE_LIMITED', message: expect.stringMatching(/^Too many wrong passwords: changes that need your password are paused on every device for 15 more minute/) });
    expect(Number(fifth.headers['retry-after'])).toBeGreaterThan(800);
    expect((await me(user)).statusCode).toBe(401);

    // The other device keeps its session, but its right password is not even checked while paused.
    expect((await me(other)).statusCode).toBe(200);
    const right = await changePassword(other, user.password);
    expect(right.statusCode).toBe(429);
    expect(Number(right.headers['retry-after'])).toBeGreaterThan(800);
    const totpSetup = await portal(ctx.app, other, { method: 'POST', url: '/api/account/totp/setup', payload: {} });
    const enable = await portal(ctx.app, other, { method: 'POST', url: '/api/account/totp/enable', payload: { password: user.password, code: '123456' } });
    expect([totpSetup.statusCode, enable.statusCode]).toEqual([200, 429]);
    expect((await me(other)).json().person.totpEnabled).toBe(false);

    // The password did not change, and signing in with it works (its own counts).
    expect((await signIn(user, 'a brand new passphrase')).statusCode).toBe(401);
    expect((await signIn(user, user.password)).statusCode).toBe(200);
  });

  it('cannot be guessed in parallel past the count', async () => {
    const user = await portalUser(ctx.database.db);
    const answers = await Promise.all(Array.from({ length: 20 }, () => changePassword(user, WRONG)));
    const checked = answers.filter((res) => res.statusCode === 400);
    expect(checked.length).toBe(4);
    expect(answers.filter((res) => res.statusCode === 429)).toHaveLength(16);
    expect((await me(user)).statusCode).toBe(401);
  });

  it('is counted on every change that asks for it, and the right one clears the count', async () => {
    const user = await portalUser(ctx.database.db);
    const { secret } = await enrolTotp(ctx.app, user);
    // The password is checked before the code: a wrong one never reaches (nor uses) the code.
    const attempts = [
      () => changePassword(user, WRONG),
      () => portal(ctx.app, user, { method: 'POST', url: '/api/account/totp/recovery-codes', payload: { password: WRONG, code: '000000' } }),
      () => portal(ctx.app, user, { method: 'POST', url: '/api/account/totp/disable', payload: { password: WRONG, code: '000000' } }),
    ];
    for (const attempt of [...attempts, attempts[0]!]) expect((await attempt()).statusCode).toBe(400);
    // Four wrong; the right password now clears them, so four more wrong ones are only wrong.
    const codes = await portal(ctx.app, user, { method: 'POST', url: '/api/account/totp/recovery-codes', payload: { password: user.password, code: await freshCode(ctx.database.db, user.personId, secret) } });
    expect(codes.statusCode).toBe(200);
    for (const attempt of [...attempts, attempts[1]!]) expect((await attempt()).statusCode).toBe(400);
    expect((await me(user)).statusCode).toBe(200);
    // The fifth after that pauses, whichever change it was.
    expect((await attempts[2]!()).statusCode).toBe(429);
    expect((await me(user)).statusCode).toBe(401);
  });

  it('counts per person: another person signed in from the same address is not paused', async () => {
    const guessed = await portalUser(ctx.database.db);
    const bystander = await portalUser(ctx.database.db);
    const remoteAddress = '10.77.0.9';
    for (let i = 0; i < 5; i++) await portal(ctx.app, guessed, { method: 'POST', url: '/api/account/password', remoteAddress, payload: { currentPassword: WRONG, newPassword: 'a brand new passphrase' } });
    const changed = await portal(ctx.app, bystander, { method: 'POST', url: '/api/account/password', remoteAddress, payload: { currentPassword: bystander.password, newPassword: 'a brand new passphrase' } });
    expect(changed.statusCode).toBe(200);
  });
});
