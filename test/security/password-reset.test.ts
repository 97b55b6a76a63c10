import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listMail } from '../../src/portal/mail.js';
import { buildTestContext, type TestContext } from '../helpers/app.js';
import { enrolTotp, freshCode, portal, portalUser, type PortalUser } from '../helpers/portal.js';

/**
 * Reset links (issue 18): a password change or reset ends every reset link issued before it, and
 * with two-factor on a reset link alone does not change the password.
 */
let ctx: TestContext;
beforeAll(async () => {
  ctx = await buildTestContext();
});
afterAll(() => ctx.close());

/** Asks for a reset link and returns its token (mails are prepared after the answer). */
async function resetToken(user: PortalUser): Promise<string> {
  const [before] = await listMail(ctx.database.db, { to: user.email, limit: 1 });
  expect((await portal(ctx.app, undefined, { method: 'POST', url: '/api/auth/forgot-password', payload: { email: user.email } })).statusCode).toBe(200);
  const end = Date.now() + 5_000;
  for (;;) {
    const [mail] = await listMail(ctx.database.db, { to: user.email, limit: 1 });
    const token = mail && mail.id !== before?.id ? /reset-password\?token=([A-Za-z0-9_-]+)/.exec(mail.text)?.[1] : undefined;
    if (token) return token;
    if (Date.now() > end) throw new Error('no reset link mailed');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

const reset = (payload: Record<string, string>) => portal(ctx.app, undefined, { method: 'POST', url: '/api/auth/reset-password', payload });

describe('reset links issued before a password change', () => {
  it('stop working when the password is changed', async () => {
    const user = await portalUser(ctx.database.db);
    const old = await resetToken(user);
    const changed = await portal(ctx.app, user, { method: 'POST', url: '/api/account/password', payload: { currentPassword: user.password, newPassword: 'the owner changed it' } });
    expect(changed.statusCode).toBe(200);
    const res = await reset({ token: old, password: 'the attacker sets this' });
    expect([res.statusCode, res.json().message]).toEqual([400, expect.stringMatching(/already used or expired/)]);
    const signIn = await portal(ctx.app, undefined, { method: 'POST', url: '/api/auth/sign-in', payload: { email: user.email, password: 'the owner changed it' } });
    expect(signIn.statusCode).toBe(200);
  });

  it('stop working when another link reset it', async () => {
    const user = await portalUser(ctx.database.db);
    const first = await resetToken(user);
    const second = await resetToken(user);
    expect((await reset({ token: second, password: 'a brand new password' })).statusCode).toBe(200);
    expect((await reset({ token: first, password: 'another new password' })).statusCode).toBe(400);
  });
});

describe('a reset of an account with two-factor', () => {
  it('needs a code of the app or a recovery code besides the link', async () => {
    const user = await portalUser(ctx.database.db);
    const { secret, recoveryCodes } = await enrolTotp(ctx.app, user);
    const token = await resetToken(user);
    const without = await reset({ token, password: 'a brand new password' });
    expect([without.statusCode, without.json()]).toEqual([400, expect.objectContaining({ code: 'VALIDATION_ERROR', message: expect.stringMatching(/^code is required/) })]);
    const wrong = await reset({ token, password: 'a brand new password', code: '000000' === (await freshCode(ctx.database.db, user.personId, secret)) ? '111111' : '000000' });
    expect([wrong.statusCode, wrong.json().message]).toEqual([400, expect.stringMatching(/^code is not right/)]);
    // Refused attempts left the password and the link as they were.
    const oldPassword = await portal(ctx.app, undefined, { method: 'POST', url: '/api/auth/sign-in', payload: { email: user.email, password: user.password } });
    expect(oldPassword.json()).toEqual({ totpRequired: true });
    expect((await reset({ token, password: 'a brand new password', code: recoveryCodes[0]! })).statusCode).toBe(200);

    const other = await resetToken(user);
    expect((await reset({ token: other, password: 'and yet another one', code: await freshCode(ctx.database.db, user.personId, secret) })).statusCode).toBe(200);
  });
});
