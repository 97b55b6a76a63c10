import type { Kysely } from 'kysely';
import type { DB } from '../../platform/db/schema.js';
import { lagosDate } from './calendar.js';
import { csvRow, naira } from './csv.js';

export type LedgerKind = 'credit' | 'charge' | 'refund' | 'debit';

export interface LedgerFilter {
  orgId: string;
  kind?: LedgerKind | undefined;
  since?: Date | undefined;
  until?: Date | undefined;
}

export interface LedgerEntryView {
  id: number;
  kind: LedgerKind;
  /** Signed kobo: credits and refunds positive, charges and debits negative. */
  amount: number;
  balanceAfter: number;
  description: string;
  createdAt: string;
}

/** The operator who made a money action, for the console (never in the customer's view). */
export interface LedgerOperator {
  id: string;
  name: string;
  email: string;
}

export interface OperatorLedgerEntryView extends LedgerEntryView {
  /** Who confirmed the funding or made the credit or debit; null for charges, refunds and the command line. */
  operator: LedgerOperator | null;
}

function scoped(db: Kysely<DB>, filter: LedgerFilter) {
  // Qualified: the console's queries join people, who have a created_at of their own.
  let query = db.selectFrom('ledger_entries').where('ledger_entries.org_id', '=', filter.orgId);
  if (filter.kind) query = query.where('ledger_entries.kind', '=', filter.kind);
  if (filter.since) query = query.where('ledger_entries.created_at', '>=', filter.since);
  if (filter.until) query = query.where('ledger_entries.created_at', '<', filter.until);
  return query;
}

/** A page of the ledger, newest first (ids grow with time), and how many rows match in all. */
export async function ledgerPage(db: Kysely<DB>, filter: LedgerFilter, page: { limit: number; offset: number }): Promise<{ rows: LedgerEntryView[]; total: number }> {
  const { rows, total } = await operatorLedgerPage(db, filter, page);
  return { rows: rows.map(({ operator: _operator, ...entry }) => entry), total };
}

/** `ledgerPage` with the operator of each money action: the console's view of the ledger. */
export async function operatorLedgerPage(
  db: Kysely<DB>,
  filter: LedgerFilter,
  page: { limit: number; offset: number },
): Promise<{ rows: OperatorLedgerEntryView[]; total: number }> {
  const query = scoped(db, filter);
  const [rows, count] = await Promise.all([
    db
      .selectFrom(
        query.select(['id', 'kind', 'amount', 'balance_after', 'description', 'created_at', 'actor_person_id']).orderBy('id', 'desc').limit(page.limit).offset(page.offset).as('e'),
      )
      .leftJoin('people as p', 'p.id', 'e.actor_person_id')
      .select(['e.id', 'e.kind', 'e.amount', 'e.balance_after', 'e.description', 'e.created_at', 'e.actor_person_id', 'p.name as actor_name', 'p.email as actor_email'])
      .orderBy('e.id', 'desc')
      .execute(),
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
      operator: r.actor_person_id && r.actor_email ? { id: r.actor_person_id, name: r.actor_name ?? '', email: r.actor_email } : null,
    })),
    total: Number(count.n),
  };
}

export const CSV_HEADER = ['id', 'created_at', 'date', 'kind', 'description', 'amount_naira', 'amount_kobo', 'balance_after_naira', 'balance_after_kobo'] as const;
/** The console's export adds who made each money action (their email; empty for charges, refunds and the command line). */
export const OPERATOR_CSV_HEADER = [...CSV_HEADER, 'operator'] as const;

/** How many ledger rows the export reads at a time: a long ledger is never held in memory whole. */
export const CSV_BATCH = 1000;

/**
 * The ledger as CSV lines, oldest first (a statement reads down in time), read in batches by id
 * (keyset, so each batch is one index range however deep the export is).
 */
export async function* ledgerCsv(db: Kysely<DB>, filter: LedgerFilter, batch = CSV_BATCH, { withOperator = false } = {}): AsyncGenerator<string> {
  yield csvRow(withOperator ? OPERATOR_CSV_HEADER : CSV_HEADER);
  let after = 0;
  for (;;) {
    const rows = await scoped(db, filter)
      .leftJoin('people as p', 'p.id', 'ledger_entries.actor_person_id')
      .select(['ledger_entries.id', 'kind', 'amount', 'balance_after', 'description', 'ledger_entries.created_at', 'p.email as actor_email'])
      .where('ledger_entries.id', '>', after)
      .orderBy('ledger_entries.id')
      .limit(batch)
      .execute();
    for (const r of rows) {
      const amount = Number(r.amount);
      const balance = Number(r.balance_after);
      const cells = [Number(r.id), r.created_at.toISOString(), lagosDate(r.created_at), r.kind, r.description, naira(amount), amount, naira(balance), balance];
      yield csvRow(withOperator ? [...cells, r.actor_email ?? ''] : cells);
    }
    if (rows.length < batch) return;
    after = Number(rows.at(-1)!.id);
  }
}
