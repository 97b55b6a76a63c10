import type { Kysely } from 'kysely';
import type { DB } from '../../platform/db/schema.js';
import { lagosDate } from './calendar.js';
import { csvRow, naira } from './csv.js';

export type LedgerKind = 'credit' | 'charge' | 'refund';

export interface LedgerFilter {
  orgId: string;
  kind?: LedgerKind | undefined;
  since?: Date | undefined;
  until?: Date | undefined;
}

export interface LedgerEntryView {
  id: number;
  kind: LedgerKind;
  /** Signed kobo: credits and refunds positive, charges negative. */
  amount: number;
  balanceAfter: number;
  description: string;
  createdAt: string;
}

function scoped(db: Kysely<DB>, filter: LedgerFilter) {
  let query = db.selectFrom('ledger_entries').where('org_id', '=', filter.orgId);
  if (filter.kind) query = query.where('kind', '=', filter.kind);
  if (filter.since) query = query.where('created_at', '>=', filter.since);
  if (filter.until) query = query.where('created_at', '<', filter.until);
  return query;
}

/** A page of the ledger, newest first (ids grow with time), and how many rows match in all. */
export async function ledgerPage(db: Kysely<DB>, filter: LedgerFilter, page: { limit: number; offset: number }): Promise<{ rows: LedgerEntryView[]; total: number }> {
  const query = scoped(db, filter);
  const [rows, count] = await Promise.all([
    query.select(['id', 'kind', 'amount', 'balance_after', 'description', 'created_at']).orderBy('id', 'desc').limit(page.limit).offset(page.offset).execute(),
    query.select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow(),
  ]);
  return {
    rows: rows.map((r) => ({
      id: Number(r.id),
      kind: r.kind as LedgerKind,
      amount: Number(r.amount),
      balanceAfter: Number(r.balance_after),
      description: r.description,
      createdAt: r.created_at.toISOString(),
    })),
    total: Number(count.n),
  };
}

export const CSV_HEADER = ['id', 'created_at', 'date', 'kind', 'description', 'amount_naira', 'amount_kobo', 'balance_after_naira', 'balance_after_kobo'] as const;

/** How many ledger rows the export reads at a time: a long ledger is never held in memory whole. */
export const CSV_BATCH = 1000;

/**
 * The ledger as CSV lines, oldest first (a statement reads down in time), read in batches by id
 * (keyset, so each batch is one index range however deep the export is).
 */
export async function* ledgerCsv(db: Kysely<DB>, filter: LedgerFilter, batch = CSV_BATCH): AsyncGenerator<string> {
  yield csvRow(CSV_HEADER);
  let after = 0;
  for (;;) {
    const rows = await scoped(db, filter)
      .select(['id', 'kind', 'amount', 'balance_after', 'description', 'created_at'])
      .where('id', '>', after)
      .orderBy('id')
      .limit(batch)
      .execute();
    for (const r of rows) {
      const amount = Number(r.amount);
      const balance = Number(r.balance_after);
      yield csvRow([Number(r.id), r.created_at.toISOString(), lagosDate(r.created_at), r.kind, r.description, naira(amount), amount, naira(balance), balance]);
    }
    if (rows.length < batch) return;
    after = Number(rows.at(-1)!.id);
  }
}
