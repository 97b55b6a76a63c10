import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AccountsService } from '../../src/accounts/service.js';
import { WalletCharger } from '../../src/platform/wallet-charger.js';
import { openTestDatabase, type TestDatabase } from '../helpers/database.js';

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
