import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { openKeyringIfConfigured } from '../../src/platform/crypto/open.js';
import { migrate } from '../../src/platform/db/migrate.js';
import { openConfiguredDatabase } from '../../src/platform/db/open.js';
import type { Database } from '../../src/platform/db/database.js';
import { AccessRequests } from '../../src/portal/access/service.js';
import { Funding } from '../../src/portal/billing/service.js';
import { cliJson, expectFailure, runCli, throwawayEnv, type CliEnv, type ThrowawayEnv } from '../helpers/cli.js';

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
