import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listMail } from '../../src/portal/mail.js';
import { hashToken } from '../../src/portal/sessions.js';
import { buildTestContext, type TestContext } from '../helpers/app.js';
import { expectFailure, runCli, throwawayEnv, type ThrowawayEnv } from '../helpers/cli.js';
import { portal, portalOrg, portalUser } from '../helpers/portal.js';
import { until } from '../helpers/smtp.js';
import { sansRequestId } from '../helpers/app.js';

/**
 * Names Vouch writes into its pages and mails (an organization's, a person's) hold no control or
 * format character and show something (docs/security.md, second review of verification sessions):
 * at sign-up, on a change of name, when an invitation makes an account, and in `vouch org create`.
 * The verification flow's display name is tested with its branding (branding.test.ts).
 */

let ctx: TestContext;
beforeAll(async () => {
  ctx = await buildTestContext();
});
afterAll(() => ctx.close());

let n = 0;
const email = () => `names${++n}-${Date.now()}@example.com`;
const HIDDEN = (field: string, codePoint: string) => `${field} must not contain invisible or direction-changing characters (${codePoint})`;
const BLANK = (field: string) => `${field} must contain a visible character, not only blank or invisible ones`;

const signUp = (payload: Record<string, string>) => portal(ctx.app, undefined, { method: 'POST', url: '/api/auth/sign-up', payload: { email: email(), ...payload } });

describe('names in the portal', () => {
  it('sign-up refuses an organization or person name that reorders, hides or shows nothing, naming the code point, and takes names in any script', async () => {
    for (const [payload, message] of [
      [{ name: 'Ada Obi', organizationName: 'Kolo \u202Eknab' }, HIDDEN('organizationName', 'U+202E')],
      [{ name: 'Ada Obi', organizationName: 'Ko\u200Blo' }, HIDDEN('organizationName', 'U+200B')],
      [{ name: 'Ada Obi', organizationName: '\u3164' }, BLANK('organizationName')],
      [{ name: 'Ada Obi', organizationName: '\u2800\u2800' }, BLANK('organizationName')],
      [{ name: '\u200D\u200D', organizationName: 'Kolo' }, HIDDEN('name', 'U+200D')],
      [{ name: 'Ada\u2066 Obi', organizationName: 'Kolo' }, HIDDEN('name', 'U+2066')],
    ] as const) {
      const res = await signUp(payload);
      expect([res.statusCode, sansRequestId(res.json())], JSON.stringify(payload)).toEqual([400, { status: 'error', code: 'VALIDATION_ERROR', message }]);
    }
    for (const payload of [
      { name: 'Ọlá Àdìgún', organizationName: 'Àdìgún & Ọmọ Ltd' },
      { name: 'فاطمة', organizationName: 'شركة كولو' },
      { name: 'Zoë Müller', organizationName: 'Kolo 🏦' },
    ]) {
      expect((await signUp(payload)).statusCode, JSON.stringify(payload)).toBe(202);
    }
  });

  it('a sign-up asked for before the rule, with such a name, is refused with the name\'s 400 when completed, not a 500', async () => {
    const address = email();
    expect((await signUp({ email: address, name: 'Ada Obi', organizationName: 'Kolo' })).statusCode).toBe(202);
    const token = await until('the sign-up mail', async () => {
      const [mail] = await listMail(ctx.database.db, { to: address, limit: 1 });
      return mail ? /\/complete-sign-up\?token=([A-Za-z0-9_-]+)/.exec(mail.text)?.[1] : undefined;
    });
    await ctx.database.db.updateTable('pending_sign_ups').set({ organization_name: 'Kolo \u202Eknab' }).where('token_hash', '=', hashToken(token)).executeTakeFirstOrThrow();
    const done = await portal(ctx.app, undefined, { method: 'POST', url: '/api/auth/complete-sign-up', payload: { token, password: 'a long enough password 1' } });
    expect([done.statusCode, sansRequestId(done.json())]).toEqual([400, { status: 'error', code: 'VALIDATION_ERROR', message: HIDDEN('organizationName', 'U+202E') }]);
    expect(await ctx.database.db.selectFrom('organizations').select('id').where('name', '=', 'Kolo \u202Eknab').execute()).toEqual([]);
  });

  it('a change of name and an account made from an invitation follow the same rule', async () => {
    const user = await portalUser(ctx.database.db);
    const rename = (name: string) => portal(ctx.app, user, { method: 'PATCH', url: '/api/account', payload: { name } });
    expect((await rename('Ada \u202EibO')).json().message).toBe(HIDDEN('name', 'U+202E'));
    expect((await rename('\u115F\u1160')).json().message).toBe(BLANK('name'));
    expect((await rename('Ọlá Àdìgún')).statusCode).toBe(200);
    expect((await portal(ctx.app, user, { method: 'GET', url: '/api/me' })).json().person.name).toBe('Ọlá Àdìgún');

    const { org, owner } = await portalOrg(ctx.database.db);
    const address = email();
    expect((await portal(ctx.app, owner, { method: 'POST', url: `/api/orgs/${org.id}/invitations`, payload: { email: address, role: 'viewer' } })).statusCode).toBe(201);
    const [mail] = await listMail(ctx.database.db, { to: address, limit: 1 });
    const token = /invitations\/accept\?token=([A-Za-z0-9_-]+)/.exec(mail?.text ?? '')![1]!;
    const accept = (name: string) => portal(ctx.app, undefined, { method: 'POST', url: '/api/invitations/accept', payload: { token, name, password: 'viewer password 1' } });
    const hidden = await accept('\uFFA0');
    expect([hidden.statusCode, hidden.json().message]).toEqual([400, BLANK('name')]);
    expect((await accept('Vee \u{1F469}\u{1F3FD}\u200D\u{1F4BB}')).statusCode).toBe(200);
  });
});

describe('vouch org create', () => {
  let throwaway: ThrowawayEnv;
  beforeAll(async () => {
    throwaway = await throwawayEnv();
  });
  afterAll(() => throwaway?.cleanup());

  it('refuses such a name with one line naming the code point', { timeout: 120_000 }, async () => {
    expectFailure(await runCli(['org', 'create', '--name', 'Kolo\u202Eknab', '--json'], throwaway.env), /^vouch: name must not contain invisible or direction-changing characters \(U\+202E\)\n$/);
    expectFailure(await runCli(['org', 'create', '--name', '\u2800', '--json'], throwaway.env), /^vouch: name must contain a visible character/);
  });
});
