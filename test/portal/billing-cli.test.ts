import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AccountsService } from '../../src/accounts/service.js';
import { loadConfig } from '../../src/config.js';
import type { Database } from '../../src/platform/db/database.js';
import { migrate } from '../../src/platform/db/migrate.js';
import { openConfiguredDatabase } from '../../src/platform/db/open.js';
import { Funding } from '../../src/portal/billing/service.js';
import { insertPerson } from '../../src/portal/people.js';
import { cliJson, expectFailure, onPostgres, runCli, throwawayEnv, type CliEnv, type ThrowawayEnv } from '../helpers/cli.js';

// Every command spawns `vouch` as built for the run (test/global-setup.ts): seconds each.
const SLOW = 180_000;

/** Opens the CLI's database in this process between commands (the embedded one allows one process at a time). */
async function withDb<T>(env: CliEnv, work: (database: Database) => Promise<T>): Promise<T> {
  const database = await openConfiguredDatabase(loadConfig(env));
  try {
    await migrate(database.db);
    return await work(database);
  } finally {
    await database.close();
  }
}

interface Listed {
  id: string;
  orgId: string;
  orgName: string;
  amount: number;
  reference: string;
  status: string;
  reason: string | null;
  ledgerEntryId: number | null;
}

describe('vouch funding: the operator confirms or rejects announced transfers', () => {
  let throwaway: ThrowawayEnv;
  let env: CliEnv;
  beforeAll(async () => {
    throwaway = await throwawayEnv();
    env = throwaway.env;
  });
  afterAll(() => throwaway?.cleanup());

  it('lists pending requests, confirms once even when run twice at once, rejects with a reason, mails the customer', { timeout: SLOW }, async () => {
    const email = `ada-${Date.now()}@lending.example`;
    const { orgId, first, second } = await withDb(env, async ({ db }) => {
      const org = await new AccountsService(db).create({ name: 'Cli Funding Ltd', enabled: true, riskLevel: 'NONE', payloadType: 'FULL', fund: 0 });
      const personId = await insertPerson(db, { email, name: 'Ada Obi', password: 'a long password 1', verified: true });
      await db.insertInto('memberships').values({ org_id: org.id, person_id: personId, role: 'owner' }).execute();
      const funding = new Funding(db);
      const actor = { kind: 'member' as const, personId };
      return {
        orgId: org.id,
        first: await funding.request(org.id, { amount: 2_500_000 }, actor),
        second: await funding.request(org.id, { amount: 100_000, reference: 'inv-77' }, actor),
      };
    });

    const pending = await cliJson<Listed[]>(['funding', 'list', '--status', 'pending', '--json'], env);
    expect(pending.map((r) => [r.id, r.amount, r.status, r.orgName])).toEqual([
      [second.id, 100_000, 'pending', 'Cli Funding Ltd'],
      [first.id, 2_500_000, 'pending', 'Cli Funding Ltd'],
    ]);
    expect(pending[0]!.reference).toBe('INV-77');

    // Two operators (or a retried command) confirm at the same moment: one credit.
    const both = await Promise.all([runCli(['funding', 'confirm', first.id, '--json'], env), runCli(['funding', 'confirm', first.id, '--json'], env)]);
    const succeeded = both.filter((r) => r.code === 0);
    expect(succeeded).toHaveLength(1);
    expect(JSON.parse(succeeded[0]!.stdout)).toMatchObject({ id: first.id, status: 'confirmed', amount: 2_500_000, ledgerEntryId: expect.any(Number) });
    // PostgreSQL serialises on the request's row lock; the embedded database admits one process at a time.
    expectFailure(both.find((r) => r.code !== 0)!, onPostgres ? /already confirmed/ : /already confirmed|in use by process/);
    expectFailure(await runCli(['funding', 'confirm', first.id, '--json'], env), /already confirmed/);

    const rejected = await cliJson<Listed>(['funding', 'reject', second.id, '--reason', 'No transfer with reference INV-77 arrived', '--json'], env);
    expect(rejected).toMatchObject({ status: 'rejected', reason: 'No transfer with reference INV-77 arrived', ledgerEntryId: null });
    expectFailure(await runCli(['funding', 'confirm', second.id], env), /already rejected/);
    expectFailure(await runCli(['funding', 'confirm', 'VCH-AAAAAA'], env), /No funding request VCH-AAAAAA/);
    expectFailure(await runCli(['funding', 'list', '--status', 'lost'], env), /status must be one of pending, confirmed, rejected, withdrawn/);

    const human = await runCli(['funding', 'list', '--org', orgId], env);
    expect(human.code).toBe(0);
    expect(human.stdout).toMatch(new RegExp(`${first.id}  ${first.reference}  ₦25,000\\.00  confirmed  Cli Funding Ltd`));

    const mails = await cliJson<{ kind: string; subject: string; text: string }[]>(['mail', 'list', '--to', email, '--json'], env);
    expect(mails.map((m) => m.kind)).toEqual(['funding_rejected', 'funding_confirmed']);
    expect(mails[1]!.subject).toBe("₦25,000.00 was added to Cli Funding Ltd's Vouch wallet");
    expect(mails[0]!.text).toContain('Reason: No transfer with reference INV-77 arrived');

    await withDb(env, async ({ db }) => {
      const org = await db.selectFrom('organizations').select('balance').where('id', '=', orgId).executeTakeFirstOrThrow();
      expect(Number(org.balance)).toBe(2_500_000);
      const ledger = await db.selectFrom('ledger_entries').select(['id', 'kind', 'amount', 'description']).where('org_id', '=', orgId).execute();
      expect(ledger).toEqual([{ id: expect.anything(), kind: 'credit', amount: expect.anything(), description: `Bank transfer ${first.reference}` }]);
      const row = await db.selectFrom('funding_requests').select(['ledger_entry_id', 'decided_by']).where('id', '=', first.id).executeTakeFirstOrThrow();
      expect(Number(row.ledger_entry_id)).toBe(Number(ledger[0]!.id));
      expect(row.decided_by).toBeNull();
      const audit = await db.selectFrom('audit_events').select(['action', 'actor_kind', 'target']).where('org_id', '=', orgId).orderBy('id').execute();
      expect(audit).toEqual([
        { action: 'funding.requested', actor_kind: 'member', target: first.reference },
        { action: 'funding.requested', actor_kind: 'member', target: 'INV-77' },
        { action: 'funding.confirmed', actor_kind: 'cli', target: first.reference },
        { action: 'funding.rejected', actor_kind: 'cli', target: 'INV-77' },
      ]);
    });
  });

  it('warns when another organization announced the same reference, in the list and after a confirmation', { timeout: SLOW }, async () => {
    const [mine, theirs] = await withDb(env, async ({ db }) => {
      const made = [];
      for (const name of ['Treasury One Ltd', 'Treasury Two Ltd']) {
        const org = await new AccountsService(db).create({ name, enabled: true, riskLevel: 'NONE', payloadType: 'FULL', fund: 0 });
        const personId = await insertPerson(db, { email: `t-${made.length}-${Date.now()}@treasury.example`, name: 'Tolu Ade', password: 'a long password 1', verified: true });
        await db.insertInto('memberships').values({ org_id: org.id, person_id: personId, role: 'owner' }).execute();
        made.push(await new Funding(db).request(org.id, { amount: 700_000 + made.length, reference: 'PAYROLL 12' }, { kind: 'member', personId }));
      }
      return made;
    });
    const listed = await cliJson<(Listed & { alsoAnnouncedBy: { orgName: string; status: string }[] })[]>(['funding', 'list', '--status', 'pending', '--json'], env);
    expect(listed.find((row) => row.id === mine!.id)!.alsoAnnouncedBy).toEqual([{ orgId: theirs!.orgId, orgName: 'Treasury Two Ltd', status: 'pending', amount: 700_001 }]);
    const human = await runCli(['funding', 'list', '--status', 'pending'], env);
    expect(human.stdout).toContain('warning: the same reference was announced by Treasury Two Ltd (pending, ₦7,000.01): match the transfer by its sender, not its narration');
    const confirmed = await runCli(['funding', 'confirm', theirs!.id], env);
    expect(confirmed.code).toBe(0);
    expect(confirmed.stdout).toContain('confirmed PAYROLL 12: credited ₦7,000.01 to Treasury Two Ltd');
    expect(confirmed.stdout).toContain('warning: the same reference was announced by Treasury One Ltd (pending, ₦7,000.00)');
  });
});
