import { sql, type Kysely } from 'kysely';
import { countCharge, recordUsage, type UsageInput, type UsageResult } from './billing.js';
import type { DB } from './db/schema.js';

interface PendingCharge {
  input: UsageInput;
  outcome: string;
  resolve(result: UsageResult): void;
  reject(error: unknown): void;
}

const MAX_BATCH = 256;

/**
 * Charges standalone live work (identity lookups) to organizations' wallets.
 *
 * A wallet is one row, and every charge must lock it until its commit reaches the disk, so
 * charging each lookup in its own transaction caps an organization at a few hundred lookups a
 * second. Instead each process keeps at most one charge transaction in flight per organization;
 * the charges that arrive meanwhile wait and go together in the next one (group commit). At low
 * load a batch holds one charge and nothing waits. Charges are granted in arrival order while
 * the balance covers them; the rest are refused (402) and recorded as `insufficient_funds`.
 * The row lock still serialises batches across processes, so no wallet is ever overdrawn.
 */
export class WalletCharger {
  private readonly queues = new Map<string, PendingCharge[]>();

  constructor(private readonly db: Kysely<DB>) {}

  /** Records the work and, in live mode, charges it; `paid: false` means nothing was charged. */
  charge(input: UsageInput, outcome = 'success'): Promise<UsageResult> {
    if (input.mode === 'test') {
      return recordUsage(this.db, input, outcome).then((usageId) => ({ usageId, paid: true, price: 0 }));
    }
    return new Promise((resolve, reject) => {
      const queue = this.queues.get(input.orgId);
      const pending = { input, outcome, resolve, reject };
      if (queue) {
        queue.push(pending);
        return;
      }
      this.queues.set(input.orgId, [pending]);
      void this.drain(input.orgId);
    });
  }

  private async drain(orgId: string): Promise<void> {
    const queue = this.queues.get(orgId)!;
    while (queue.length > 0) {
      const batch = queue.splice(0, MAX_BATCH);
      try {
        const results = await chargeBatch(this.db, orgId, batch);
        batch.forEach((pending, i) => {
          const result = results[i]!;
          if (result.paid) countCharge(pending.input.billable.type, result.price);
          pending.resolve(result);
        });
      } catch (error) {
        for (const pending of batch) pending.reject(error);
      }
    }
    this.queues.delete(orgId);
  }
}

interface WalletRow {
  balance: number;
  prices: Record<string, number>;
  ledger_ids: number[];
}

/** Charges a batch of one organization's live work in one transaction of four round trips. */
async function chargeBatch(db: Kysely<DB>, orgId: string, batch: PendingCharge[]): Promise<UsageResult[]> {
  const types = [...new Set(batch.map((pending) => pending.input.billable.type))];
  return db.transaction().execute(async (trx) => {
    // Lock the wallet, read the price overrides, and reserve ledger ids for the rows below.
    const { rows } = await sql<WalletRow>`
      select o.balance,
        (select coalesce(jsonb_object_agg(p.type, p.amount), '{}'::jsonb) from prices p where p.type = any(${types})) as prices,
        array(select nextval('ledger_entries_id_seq') from generate_series(1, ${batch.length}::int)) as ledger_ids
      from organizations o where o.id = ${orgId}
      for update of o`.execute(trx);
    const wallet = rows[0];
    if (!wallet) throw new Error(`no organization ${orgId}`);

    let balance = wallet.balance;
    const ledger: { id: number; amount: number; balanceAfter: number; description: string }[] = [];
    const usage = batch.map((pending, i) => {
      const { billable, subject } = pending.input;
      const source = pending.input.source ?? null;
      const latencyMs = pending.input.latencyMs ?? null;
      const price = Number(wallet.prices[billable.type] ?? billable.defaultPrice);
      if (price > balance) return { type: billable.type, subject, source, latencyMs, outcome: 'insufficient_funds', price: 0, ledgerId: null };
      balance -= price;
      const id = Number(wallet.ledger_ids[i]);
      ledger.push({ id, amount: -price, balanceAfter: balance, description: `${billable.type} ${subject}` });
      return { type: billable.type, subject, source, latencyMs, outcome: pending.outcome, price, ledgerId: id as number | null };
    });

    const ledgerValues = ledger.length
      ? sql.join(ledger.map((row) => sql`(${row.id}::bigint, ${orgId}::uuid, 'charge', ${row.amount}::bigint, ${row.balanceAfter}::bigint, ${row.description})`))
      : null;
    const usageValues = sql.join(
      usage.map((row) => sql`(${orgId}::uuid, 'live', ${row.type}, ${row.subject}, ${row.outcome}, ${row.price}::bigint, ${row.ledgerId}::bigint, ${row.source}::text, ${row.latencyMs}::int)`),
    );
    const { rows: inserted } = ledgerValues
      ? await sql<{ id: number }>`
          with debit as (
            update organizations set balance = ${balance}::bigint where id = ${orgId}
          ), entries as (
            insert into ledger_entries (id, org_id, kind, amount, balance_after, description) values ${ledgerValues}
          )
          insert into usage_events (org_id, mode, type, subject, outcome, price, ledger_entry_id, source, latency_ms) values ${usageValues}
          returning id`.execute(trx)
      : await sql<{ id: number }>`
          insert into usage_events (org_id, mode, type, subject, outcome, price, ledger_entry_id, source, latency_ms) values ${usageValues}
          returning id`.execute(trx);
    // Multi-row VALUES are inserted, and returned, in order.
    return usage.map((row, i) => ({ usageId: inserted[i]!.id, paid: row.outcome !== 'insufficient_funds', price: row.price }));
  });
}
