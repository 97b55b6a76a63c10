import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { openKeyringIfConfigured } from '../../src/platform/crypto/open.js';
import { migrate } from '../../src/platform/db/migrate.js';
import { openConfiguredDatabase } from '../../src/platform/db/open.js';
import type { Database } from '../../src/platform/db/database.js';
import { sql } from 'kysely';
import { generateSecret } from 'otplib';
import { AccountsService } from '../../src/accounts/service.js';
import { AccessRequests } from '../../src/portal/access/service.js';
import { replaceRecoveryCodes } from '../../src/portal/auth/second-factor.js';
import { counterKey } from '../../src/portal/auth/throttle.js';
import { Funding } from '../../src/portal/billing/service.js';
import { insertPerson } from '../../src/portal/people.js';
import { createSession, SESSION_COOKIE } from '../../src/portal/sessions.js';
import { cliJson, expectFailure, runCli, startServer, throwawayEnv, type CliEnv, type ThrowawayEnv } from '../helpers/cli.js';

// Every command spawns `vouch` as built for the run (test/global-setup.ts): seconds each.
const SLOW = 120_000;

/** Opens the CLI's database in this process between commands (the embedded one allows one process at a time), with its keyring as the CLI does. */
async function withDb<T>(env: CliEnv, work: (database: Database) => Promise<T>): Promise<T> {
  const config = loadConfig(env);
  const database = await openConfiguredDatabase(config);
  try {
    await migrate(database.db);
    await openKeyringIfConfigured(database, config);
    return await work(database);
  } finally {
    await database.close();
  }
}

describe('operator commands of the portal flows', () => {
  let throwaway: ThrowawayEnv;
  let env: CliEnv;
  beforeAll(async () => {
    throwaway = await throwawayEnv();
    env = throwaway.env;
  });
  afterAll(() => throwaway?.cleanup());

  it('org enable approves the pending access request; funding confirm credits once; mail list shows mails', { timeout: SLOW }, async () => {
    const org = await cliJson<{ id: string; enabled: boolean }>(['org', 'create', '--name', 'Cli Lending', '--json'], env);
    expect(org.enabled).toBe(false);
    const fundingId = await withDb(env, async ({ db }) => {
      await migrate(db);
      await new AccessRequests(db).request(org.id, { riskLevel: 'MEDIUM', payloadType: 'HALF' }, { kind: 'member' });
      await db.insertInto('mail_messages').values({ kind: 'verify_email', recipient: 'ada@example.com', subject: 'Confirm your email for Vouch', text: 'open http://x/verify-email?token=abc' }).execute();
      return (await new Funding(db).request(org.id, { amount: 250_000 }, { kind: 'member' })).id;
    });

    const enabled = await cliJson<{ enabled: boolean; riskLevel: string; payloadType: string }>(['org', 'enable', org.id, '--risk-level', 'LOW', '--payload-type', 'HALF', '--json'], env);
    expect(enabled).toMatchObject({ enabled: true, riskLevel: 'LOW', payloadType: 'HALF' });

    const pending = await cliJson<{ id: string; amount: number; status: string }[]>(['funding', 'list', '--status', 'pending', '--json'], env);
    expect(pending).toEqual([expect.objectContaining({ id: fundingId, amount: 250_000, status: 'pending' })]);
    const confirmed = await cliJson<{ status: string }>(['funding', 'confirm', fundingId, '--json'], env);
    expect(confirmed.status).toBe('confirmed');
    expectFailure(await runCli(['funding', 'confirm', fundingId, '--json'], env), /already confirmed/);

    const mails = await cliJson<{ to: string; subject: string; text: string }[]>(['mail', 'list', '--to', 'ada@example.com', '--json'], env);
    expect(mails).toEqual([expect.objectContaining({ to: 'ada@example.com', subject: 'Confirm your email for Vouch' })]);

    await withDb(env, async ({ db }) => {
      const request = await db.selectFrom('access_requests').selectAll().where('org_id', '=', org.id).executeTakeFirstOrThrow();
      expect(request).toMatchObject({ status: 'approved', decided_risk_level: 'LOW', decided_payload_type: 'HALF', decided_by: null });
      const balance = await db.selectFrom('organizations').select('balance').where('id', '=', org.id).executeTakeFirstOrThrow();
      expect(Number(balance.balance)).toBe(250_000);
      const audit = await db.selectFrom('audit_events').select(['action', 'actor_kind']).where('org_id', '=', org.id).orderBy('id').execute();
      expect(audit).toEqual([
        { action: 'access.requested', actor_kind: 'member' },
        { action: 'funding.requested', actor_kind: 'member' },
        { action: 'access.approved', actor_kind: 'cli' },
        { action: 'funding.confirmed', actor_kind: 'cli' },
      ]);
    });

    expectFailure(await runCli(['org', 'decline', org.id, '--reason', 'no licence', '--json'], env), /no pending access request/);
  });
});

describe('vouch person reset-second-factor', () => {
  let throwaway: ThrowawayEnv;
  let env: CliEnv;
  beforeAll(async () => {
    throwaway = await throwawayEnv();
    env = { ...throwaway.env, VOUCH_DEMO: '0', PUBLIC_URL: 'https://vouch.example.ng' };
  });
  afterAll(() => throwaway?.cleanup());

  it('turns the lost second factor off, ends every session, audits and mails; then the password alone signs in', { timeout: SLOW }, async () => {
    const email = 'lost.phone@lender.example';
    const password = 'correct horse battery';
    const { personId, orgId, cookies } = await withDb(env, async ({ db }) => {
      const personId = await insertPerson(db, { email, name: 'Ifeoma Lost', password, verified: true });
      await db.updateTable('people').set({ totp_secret: generateSecret(), totp_enabled_at: sql<Date>`now()`, totp_failures: 3 }).where('id', '=', personId).execute();
      await replaceRecoveryCodes(db, personId);
      const org = await new AccountsService(db).create({ name: 'Lost Phone Lending', enabled: true, riskLevel: 'NONE', payloadType: 'FULL', fund: 0 });
      await db.insertInto('memberships').values({ org_id: org.id, person_id: personId, role: 'owner' }).execute();
      const sessions = await Promise.all([createSession(db, { personId }), createSession(db, { personId, pendingTotp: true })]);
      await db.insertInto('auth_counters').values({ key: counterKey('reauth', personId), hits: 5, window_ends_at: new Date(Date.now() + 600_000) }).execute();
      return { personId, orgId: org.id, cookies: sessions.map(({ token }) => `${SESSION_COOKIE}=${token}`) };
    });

    const reset = await cliJson(['person', 'reset-second-factor', '--email', ' Lost.Phone@Lender.example ', '--json'], env);
    expect(reset).toEqual({ id: personId, email, sessionsEnded: 2, recoveryCodesRemoved: 10 });
    expectFailure(await runCli(['person', 'reset-second-factor', '--email', email, '--json'], env), /^vouch: lost\.phone@lender\.example has no second factor on; nothing was changed\n$/);
    expectFailure(await runCli(['person', 'reset-second-factor', '--email', 'nobody@lender.example'], env), /^vouch: no person has the email nobody@lender\.example\n$/);

    await withDb(env, async ({ db }) => {
      const person = await db.selectFrom('people').select(['totp_secret', 'totp_enabled_at', 'totp_failures', 'totp_locked_until']).where('id', '=', personId).executeTakeFirstOrThrow();
      expect(person).toEqual({ totp_secret: null, totp_enabled_at: null, totp_failures: 0, totp_locked_until: null });
      expect(await db.selectFrom('totp_recovery_codes').select('code_hash').where('person_id', '=', personId).execute()).toEqual([]);
      expect(await db.selectFrom('auth_counters').select('key').where('key', '=', counterKey('reauth', personId)).execute()).toEqual([]);
      const events = await db.selectFrom('audit_events').select(['org_id', 'actor_kind', 'action', 'target']).where('action', '=', 'member.second_factor_reset').execute();
      expect(events).toEqual([{ org_id: orgId, actor_kind: 'cli', action: 'member.second_factor_reset', target: email }]);
    });
    const mails = await cliJson<{ to: string; kind: string; subject: string; text: string }[]>(['mail', 'list', '--to', email, '--json'], env);
    expect(mails.map((m) => [m.kind, m.subject])).toEqual([['second_factor_reset', 'Two-factor authentication was turned off on your Vouch account']]);
    expect(mails[0]!.text).toContain('https://vouch.example.ng/forgot-password');

    // Served at its own address: the mails' PUBLIC_URL above is nobody's.
    const { PUBLIC_URL: _mailed, ...served } = env;
    const server = await startServer(served);
    try {
      const url = server.banner.url;
      for (const cookie of cookies) expect((await fetch(`${url}/api/me`, { headers: { cookie } })).status).toBe(401);
      const signIn = await fetch(`${url}/api/auth/sign-in`, { method: 'POST', headers: { origin: url, 'content-type': 'application/json' }, body: JSON.stringify({ email, password }) });
      expect([signIn.status, await signIn.json()]).toEqual([200, { totpRequired: false }]);
    } finally {
      await server.stop();
    }
  });
});
