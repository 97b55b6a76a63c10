import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { openConfiguredDatabase } from '../../src/platform/db/open.js';
import type { Database } from '../../src/platform/db/database.js';
import { migrate } from '../../src/platform/db/migrate.js';
import { AccessRequests } from '../../src/portal/access/service.js';
import { insertPerson } from '../../src/portal/people.js';
import { cliJson, expectFailure, runCli, throwawayEnv, type CliEnv, type ThrowawayEnv } from '../helpers/cli.js';

// Every command spawns `vouch` as built for the run (test/global-setup.ts): seconds each.
const SLOW = 120_000;

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

describe('vouch access list, org decline and org enable', () => {
  let throwaway: ThrowawayEnv;
  let env: CliEnv;
  beforeAll(async () => {
    throwaway = await throwawayEnv();
    env = throwaway.env;
  });
  afterAll(() => throwaway?.cleanup());

  it('lists the pending requests, declines one with a reason and approves the next, mailing the member who asked', { timeout: SLOW }, async () => {
    const org = await cliJson<{ id: string; name: string }>(['org', 'create', '--name', 'Ada Lending', '--json'], env);
    const email = `ada-${Date.now()}@lending.example`;
    const first = await withDb(env, async ({ db }) => {
      const personId = await insertPerson(db, { email, name: 'Ada Obi', password: 'correct horse battery', verified: true });
      await db.insertInto('memberships').values({ org_id: org.id, person_id: personId, role: 'owner' }).execute();
      return new AccessRequests(db).request(org.id, { riskLevel: 'HIGH', payloadType: 'FULL', useCase: 'Salary loans' }, { kind: 'member', personId });
    });

    const pending = await cliJson<{ id: string; orgId: string; orgName: string; status: string; riskLevel: string; useCase: string }[]>(['access', 'list', '--status', 'pending', '--json'], env);
    expect(pending).toEqual([expect.objectContaining({ id: first, orgId: org.id, orgName: 'Ada Lending', status: 'pending', riskLevel: 'HIGH', useCase: 'Salary loans' })]);
    const text = await runCli(['access', 'list'], env);
    expect(text.stdout).toContain(`${first}  ${org.id}  Ada Lending  asked HIGH/FULL  pending`);

    const declined = await cliJson<{ requestId: string; status: string }>(['org', 'decline', org.id, '--reason', 'Send your CBN licence', '--json'], env);
    expect(declined).toMatchObject({ requestId: first, status: 'declined' });
    expect(await cliJson(['access', 'list', '--status', 'pending', '--json'], env)).toEqual([]);

    const second = await withDb(env, ({ db }) => new AccessRequests(db).request(org.id, { riskLevel: 'MEDIUM', payloadType: 'HALF' }, { kind: 'member' }));
    const enabled = await cliJson<{ enabled: boolean; riskLevel: string }>(['org', 'enable', org.id, '--risk-level', 'LOW', '--payload-type', 'HALF', '--json'], env);
    expect(enabled).toMatchObject({ enabled: true, riskLevel: 'LOW' });
    const all = await cliJson<{ id: string; status: string; decidedRiskLevel: string | null }[]>(['access', 'list', '--json'], env);
    expect(all.map((r) => [r.id, r.status, r.decidedRiskLevel])).toEqual([
      [second, 'approved', 'LOW'],
      [first, 'declined', null],
    ]);

    // The decline went to the member who asked; the approval of a request without a person, to the owners.
    const mails = await cliJson<{ kind: string; to: string; text: string }[]>(['mail', 'list', '--to', email, '--json'], env);
    expect(mails.map((m) => m.kind)).toEqual(['access_approved', 'access_declined']);
    expect(mails[1]!.text).toContain('Reason: Send your CBN licence');

    expectFailure(await runCli(['access', 'list', '--status', 'lost'], env), /status must be one of pending, approved, declined/);
    expectFailure(await runCli(['org', 'decline', org.id, '--reason', 'again'], env), /no pending access request/);
  });
});
