import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AccountsService } from '../../src/accounts/service.js';
import { EmbeddedRegistry } from '../../src/identities/registry/embedded.js';
import { ConfigError, loadConfig } from '../../src/config.js';
import { openKeyring } from '../../src/platform/crypto/open.js';
import { openDatabase } from '../../src/platform/db/database.js';
import { CoverChecks, WalletCharger } from '../../src/platform/wallet-charger.js';
import { testConfig } from '../helpers/app.js';
import { openTestDatabase, type TestDatabase } from '../helpers/database.js';
import { planCosts, preparedStatements, Statements } from '../helpers/statements.js';

const CHEAP = { type: 'test_cheap', defaultPrice: 1_000 };
const DEAR = { type: 'test_dear', defaultPrice: 5_000 };

describe('wallet charger', () => {
  let database: TestDatabase;
  let accounts: AccountsService;
  beforeAll(async () => {
    database = await openTestDatabase();
    accounts = new AccountsService(database.db);
  });
  afterAll(() => database.cleanup());

  async function ledgerSum(orgId: string): Promise<number> {
    const rows = await database.db.selectFrom('ledger_entries').select('amount').where('org_id', '=', orgId).execute();
    return rows.reduce((sum, row) => sum + row.amount, 0);
  }

  it('never overdraws when two processes charge one wallet at once', async () => {
    const org = await accounts.create({ name: 'Busy', enabled: true, fund: CHEAP.defaultPrice * 50 });
    const first = new WalletCharger(database.db);
    const second = new WalletCharger(database.db);
    const results = await Promise.all(
      Array.from({ length: 200 }, (_, i) =>
        (i % 2 ? first : second).charge({ orgId: org.id, mode: 'live', billable: CHEAP, subject: `s${i}` }),
      ),
    );
    expect(results.filter((r) => r.paid)).toHaveLength(50);
    expect(results.filter((r) => !r.paid).every((r) => r.price === 0)).toBe(true);
    expect((await accounts.get(org.id)).balance).toBe(0);
    expect(await ledgerSum(org.id)).toBe(0);
    const usage = await database.db.selectFrom('usage_events').selectAll().where('org_id', '=', org.id).execute();
    expect(usage).toHaveLength(200);
    expect(usage.filter((row) => row.outcome === 'insufficient_funds')).toHaveLength(150);
    expect(new Set(results.map((r) => r.usageId)).size).toBe(200);
    const charged = usage.filter((row) => row.ledger_entry_id !== null);
    expect(charged).toHaveLength(50);
  });

  it('grants charges in arrival order while the balance covers each one', async () => {
    const org = await accounts.create({ name: 'Mixed', enabled: true, fund: 7_000 });
    const charger = new WalletCharger(database.db);
    const results = await Promise.all(
      [DEAR, DEAR, CHEAP].map((billable, i) => charger.charge({ orgId: org.id, mode: 'live', billable, subject: `m${i}` })),
    );
    expect(results.map((r) => [r.paid, r.price])).toEqual([[true, 5_000], [false, 0], [true, 1_000]]);
    expect((await accounts.get(org.id)).balance).toBe(1_000);
    expect(await ledgerSum(org.id)).toBe(1_000);
    const entries = await database.db.selectFrom('ledger_entries').selectAll().where('org_id', '=', org.id).orderBy('id').execute();
    expect(entries.map((e) => e.balance_after)).toEqual([7_000, 2_000, 1_000]);
  });

  it('records test mode without touching the wallet', async () => {
    const org = await accounts.create({ name: 'Sandbox', fund: 0 });
    const result = await new WalletCharger(database.db).charge({ orgId: org.id, mode: 'test', billable: DEAR, subject: 'x' });
    expect(result).toMatchObject({ paid: true, price: 0 });
    expect(await ledgerSum(org.id)).toBe(0);
  });
});

describe('cover checks (the wallet look before an identity lookup)', () => {
  let database: TestDatabase;
  let accounts: AccountsService;
  beforeAll(async () => {
    database = await openTestDatabase();
    accounts = new AccountsService(database.db);
  });
  afterAll(() => database.cleanup());

  it("answers concurrent checks of one organization and price with one statement per batch, never mixing organizations or prices", async () => {
    const rich = await accounts.create({ name: 'Rich', enabled: true, fund: 5_000 });
    const poor = await accounts.create({ name: 'Poor', enabled: true, fund: 1_000 });
    const statements = new Statements();
    const checks = new CoverChecks(database.db.withPlugin(statements));
    const live = (orgId: string, billable: typeof CHEAP) => ({ orgId, mode: 'live' as const, billable });
    const answers = await Promise.all([
      ...Array.from({ length: 40 }, () => checks.covers(live(rich.id, DEAR))),
      ...Array.from({ length: 10 }, () => checks.covers(live(poor.id, DEAR))),
      ...Array.from({ length: 10 }, () => checks.covers(live(poor.id, CHEAP))),
    ]);
    expect(answers.slice(0, 40).every(Boolean)).toBe(true);
    expect(answers.slice(40, 50).some(Boolean)).toBe(false);
    expect(answers.slice(50).every(Boolean)).toBe(true);
    // Per key: the first check alone, then everyone who arrived meanwhile together.
    expect(statements.results).toBe(6);
    // Test mode asks nothing.
    expect(await checks.covers({ orgId: poor.id, mode: 'test', billable: DEAR })).toBe(true);
    expect(statements.results).toBe(6);
  });

  // PGlite has one session: a statement's answer held on its way back holds the whole database, so
  // the balance cannot change meanwhile. The embedded database runs one statement at a time anyway.
  it.skipIf(!process.env.DATABASE_URL)('reads, for every check, a balance at least as recent as the check: one that arrives while a statement runs waits for the next', async () => {
    const org = await accounts.create({ name: 'Draining', enabled: true, fund: 5_000 });
    const statements = new Statements();
    const checks = new CoverChecks(database.db.withPlugin(statements));
    const work = { orgId: org.id, mode: 'live' as const, billable: DEAR };
    statements.hold = true;
    const early = checks.covers(work);
    // The first statement has read the balance (5,000) and its answer is held on its way back.
    await statements.untilHeld();
    await database.db.updateTable('organizations').set({ balance: 0 }).where('id', '=', org.id).execute();
    const late = checks.covers(work);
    statements.release();
    expect(await early).toBe(true);
    expect(await late).toBe(false);
    expect(statements.results).toBe(2);
  });

  it('passes a failed statement to every check waiting on it, and the next check runs afresh', async () => {
    const org = await accounts.create({ name: 'Gone', enabled: true, fund: 5_000 });
    const checks = new CoverChecks(database.db);
    // Not a uuid: the statement fails in the database.
    const broken = { orgId: 'not-a-uuid', mode: 'live' as const, billable: DEAR };
    const results = await Promise.allSettled([checks.covers(broken), checks.covers(broken)]);
    expect(results.map((result) => result.status)).toEqual(['rejected', 'rejected']);
    expect(await checks.covers({ orgId: org.id, mode: 'live', billable: DEAR })).toBe(true);
  });
});

describe('the statements every identity lookup shares', () => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await openTestDatabase();
  });
  afterAll(() => database.cleanup());

  it.runIf(process.env.DATABASE_URL)('runs the cover check, the registry read and the charge as named prepared statements on PostgreSQL', async () => {
    const org = await new AccountsService(database.db).create({ name: 'Prepared', enabled: true, fund: 20_000 });
    // One connection, so the statements and the check share a session (pg_prepared_statements is per session).
    const single = await openDatabase({ url: database.url!, poolSize: 1 });
    try {
      await openKeyring(single, testConfig());
      const work = { orgId: org.id, mode: 'live' as const, billable: DEAR };
      for (let i = 0; i < 2; i++) {
        expect(await new CoverChecks(single.db).covers(work)).toBe(true);
        expect(await new EmbeddedRegistry(single.db).find('bvn', '22200000001')).toBeUndefined();
        expect(await new WalletCharger(single.db).charge({ ...work, subject: `p${i}` })).toMatchObject({ paid: true, price: 5_000 });
      }
      const statements = await preparedStatements(single.db);
      for (const reads of ['from organizations o', 'from registry_records', 'from vouch_charge_batch']) {
        const named = statements.filter((row) => row.statement.includes(reads));
        expect(named, reads).toHaveLength(1);
        expect(named[0]!.name).toMatch(/^vouch_[0-9a-f]{32}$/);
      }
      expect((await new AccountsService(database.db).get(org.id)).balance).toBe(10_000);
    } finally {
      await single.close();
    }
  });

  it.runIf(process.env.DATABASE_URL)('has PostgreSQL keep one plan for each of them, however large the registry: the plan of the registry read for given values costs what its plan for any values does', async () => {
    const org = await new AccountsService(database.db).create({ name: 'Planned', enabled: true, fund: 100_000 });
    // A registry of thousands, and its statistics: planned for one blind index, the read looked cheaper than for any.
    await sql`insert into registry_records (type, key, record) select 'bvn', md5(g::text), '{}'::jsonb from generate_series(1, 5000) g`.execute(database.db);
    await sql`analyze registry_records`.execute(database.db);
    const single = await openDatabase({ url: database.url!, poolSize: 1 });
    try {
      await openKeyring(single, testConfig());
      const work = { orgId: org.id, mode: 'live' as const, billable: DEAR };
      // Seven calls each: five planned for their values, then the plan for any values, once it costs no more.
      for (let i = 0; i < 7; i++) {
        expect(await new CoverChecks(single.db).covers(work)).toBe(true);
        expect(await new EmbeddedRegistry(single.db).find('bvn', `2230000000${i}`)).toBeUndefined();
        expect(await new WalletCharger(single.db).charge({ ...work, subject: `planned-${i}` })).toMatchObject({ paid: true });
      }
      const statements = await preparedStatements(single.db);
      for (const reads of ['from organizations o', 'from registry_records', 'from vouch_charge_batch']) {
        const [statement] = statements.filter((row) => row.statement.includes(reads));
        expect([statement!.customPlans, statement!.genericPlans], reads).toEqual([5, 2]);
      }
      const read = statements.find((row) => row.statement.includes('from registry_records'))!;
      const { custom, generic } = await planCosts(single.db, read.name, ['bvn', `{${'a'.repeat(64)}}`]);
      expect(custom).toBe(generic);
    } finally {
      await single.close();
    }
  });

  it('reads DATABASE_PREPARED_STATEMENTS: on unless turned off, a clear error for anything else', () => {
    expect(loadConfig({}).databasePreparedStatements).toBe(true);
    expect(loadConfig({ DATABASE_PREPARED_STATEMENTS: 'off' }).databasePreparedStatements).toBe(false);
    expect(() => loadConfig({ DATABASE_PREPARED_STATEMENTS: 'sometimes' })).toThrow(ConfigError);
    expect(() => loadConfig({ DATABASE_PREPARED_STATEMENTS: 'sometimes' })).toThrow(/DATABASE_PREPARED_STATEMENTS/);
  });

  it.runIf(process.env.DATABASE_URL)('sends every statement unnamed when prepared statements are off (a pooler that cannot keep them)', async () => {
    const org = await new AccountsService(database.db).create({ name: 'Unprepared', enabled: true, fund: 20_000 });
    const single = await openDatabase({ url: database.url!, poolSize: 1, preparedStatements: false });
    try {
      await openKeyring(single, testConfig());
      const work = { orgId: org.id, mode: 'live' as const, billable: DEAR };
      expect(await new CoverChecks(single.db).covers(work)).toBe(true);
      expect(await new EmbeddedRegistry(single.db).find('bvn', '22200000001')).toBeUndefined();
      expect(await new WalletCharger(single.db).charge({ ...work, subject: 'u' })).toMatchObject({ paid: true, price: 5_000 });
      expect(await preparedStatements(single.db)).toEqual([]);
      expect((await new AccountsService(database.db).get(org.id)).balance).toBe(15_000);
    } finally {
      await single.close();
    }
  });
});
