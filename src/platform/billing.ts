import { sql, type Kysely } from 'kysely';
import type { DB, Mode } from './db/schema.js';
import { runPrepared } from './db/prepared.js';
import { metrics } from './metrics.js';

/** A billable kind of work and its price in kobo when no override is set. */
export interface Billable {
  type: string;
  defaultPrice: number;
}

export interface UsageInput {
  orgId: string;
  mode: Mode;
  billable: Billable;
  /** What was checked, already masked: never a full identity number. */
  subject: string;
  /** Which source answered a lookup (`embedded`, `cache`, an upstream's name); absent for other work. */
  source?: string | undefined;
  /** How long the registry part of a lookup took. */
  latencyMs?: number | undefined;
}

export interface UsageResult {
  usageId: number;
  /** False when a live wallet could not pay: nothing was charged and the caller answers 402. */
  paid: boolean;
  price: number;
}

/**
 * Records a successful piece of work and, in live mode, charges its price — in one statement,
 * so the debit, the ledger row and the usage row commit together, and the conditional UPDATE
 * serialises concurrent charges on the wallet row: no overdraft, whatever the concurrency.
 * Test mode never charges.
 */
export async function chargeUsage(db: Kysely<DB>, input: UsageInput, outcome = 'success'): Promise<UsageResult> {
  const { orgId, mode, billable, subject } = input;
  if (mode === 'test') {
    const usageId = await recordUsage(db, input, outcome);
    return { usageId, paid: true, price: 0 };
  }
  const { rows } = await sql<{ id: number; outcome: string; price: number }>`
    with price as (
      select coalesce((select amount from prices where type = ${billable.type}), ${billable.defaultPrice}::bigint) as amount
    ), debit as (
      update organizations o set balance = o.balance - p.amount
      from price p
      where o.id = ${orgId} and o.balance >= p.amount
      returning o.balance, p.amount
    ), entry as (
      insert into ledger_entries (org_id, kind, amount, balance_after, description)
      select ${orgId}, 'charge', -d.amount, d.balance, ${`${billable.type} ${subject}`} from debit d
      returning id, amount
    )
    insert into usage_events (org_id, mode, type, subject, outcome, price, ledger_entry_id)
    select ${orgId}, 'live', ${billable.type}, ${subject},
      case when exists (select 1 from entry) then ${outcome} else 'insufficient_funds' end,
      coalesce((select -amount from entry), 0),
      (select id from entry)
    returning id, outcome, price`.execute(db);
  const row = rows[0]!;
  const paid = row.outcome !== 'insufficient_funds';
  if (paid) countCharge(billable.type, row.price);
  return { usageId: row.id, paid, price: row.price };
}

/**
 * Whether the wallet holds the price of the work now; test mode always does. Identity lookups ask
 * before the work: an account that cannot pay must get one answer (402) whatever the number, and
 * must not cost an upstream call or a face match. Only a look: the charge after the work checks
 * the balance again under the wallet's row lock, so concurrent work can never overdraw it.
 */
export async function coversPrice(db: Kysely<DB>, work: Pick<UsageInput, 'orgId' | 'mode' | 'billable'>): Promise<boolean> {
  if (work.mode === 'test') return true;
  const [wallet] = await runPrepared<{ covered: boolean }>(db, COVERS_PRICE, [work.billable.type, work.billable.defaultPrice, work.orgId]);
  return Boolean(wallet?.covered);
}

/**
 * Whether the balance covers the price (`prices` overrides the default), as a SELECT of one row
 * (`covered`) over the placeholders given: every identity lookup asks, alone (COVERS_PRICE) or
 * inside the embedded registry's read (src/identities/registry/embedded.ts).
 */
export function coversPriceSelect(type: string, defaultPrice: string, orgId: string): string {
  return `select o.balance >= coalesce((select amount from prices where type = ${type}), ${defaultPrice}::bigint) as covered
  from organizations o where o.id = ${orgId}`;
}

const COVERS_PRICE = coversPriceSelect('$1', '$2', '$3');

/** A live charge in the metrics (counted when its statement ran; a rare rollback after it is not taken back). */
export function countCharge(type: string, price: number): void {
  metrics.walletCharges.inc({ type });
  metrics.walletChargedKobo.inc({ type }, price);
}

/** Records work that is not charged (not found, test mode). */
export async function recordUsage(db: Kysely<DB>, input: UsageInput, outcome: string): Promise<number> {
  const row = await db
    .insertInto('usage_events')
    .values({
      org_id: input.orgId,
      mode: input.mode,
      type: input.billable.type,
      subject: input.subject,
      outcome,
      price: 0,
      source: input.source ?? null,
      latency_ms: input.latencyMs ?? null,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return row.id;
}

/** Adds kobo to a wallet with its ledger row; returns the new balance. */
export async function credit(db: Kysely<DB>, orgId: string, amount: number, description: string): Promise<number> {
  return (await creditEntry(db, orgId, amount, description)).balance;
}

/**
 * Credits the wallet with its ledger row; inside the caller's transaction when given one (a
 * confirmed funding request is marked in the same transaction), else in a transaction of its own.
 * `actorPersonId`: the operator who made it, named on the row (null for the command line).
 */
export async function creditEntry(
  db: Kysely<DB>,
  orgId: string,
  amount: number,
  description: string,
  actorPersonId: string | null = null,
): Promise<{ balance: number; entryId: number }> {
  if (!Number.isSafeInteger(amount) || amount <= 0) throw new RangeError('amount must be a positive whole number of kobo');
  const work = async (trx: Kysely<DB>) => {
    const org = await trx
      .updateTable('organizations')
      .set((eb) => ({ balance: eb('balance', '+', amount) }))
      .where('id', '=', orgId)
      .returning('balance')
      .executeTakeFirst();
    if (!org) throw new RangeError(`no organization ${orgId}`);
    const entry = await trx
      .insertInto('ledger_entries')
      .values({ org_id: orgId, kind: 'credit', amount, balance_after: org.balance, description, actor_person_id: actorPersonId })
      .returning('id')
      .executeTakeFirstOrThrow();
    return { balance: org.balance, entryId: Number(entry.id) };
  };
  return db.isTransaction ? work(db) : db.transaction().execute(work);
}

/**
 * Takes kobo off the wallet with its ledger row (kind `debit`, negative amount), inside the
 * caller's transaction: an operator's correction. Only when the wallet holds that much (the
 * conditional UPDATE serialises with charges on the wallet row, so no concurrency overdraws it):
 * otherwise nothing changes and the answer is undefined. `actorPersonId`: the operator.
 */
export async function debitEntry(
  db: Kysely<DB>,
  orgId: string,
  amount: number,
  description: string,
  actorPersonId: string | null,
): Promise<{ balance: number; entryId: number } | undefined> {
  if (!Number.isSafeInteger(amount) || amount <= 0) throw new RangeError('amount must be a positive whole number of kobo');
  const org = await db
    .updateTable('organizations')
    .set((eb) => ({ balance: eb('balance', '-', amount) }))
    .where('id', '=', orgId)
    .where('balance', '>=', amount)
    .returning('balance')
    .executeTakeFirst();
  if (!org) return undefined;
  const entry = await db
    .insertInto('ledger_entries')
    .values({ org_id: orgId, kind: 'debit', amount: -amount, balance_after: org.balance, description, actor_person_id: actorPersonId })
    .returning('id')
    .executeTakeFirstOrThrow();
  return { balance: Number(org.balance), entryId: Number(entry.id) };
}

export async function priceOf(db: Kysely<DB>, billable: Billable): Promise<number> {
  const row = await db.selectFrom('prices').select('amount').where('type', '=', billable.type).executeTakeFirst();
  return row?.amount ?? billable.defaultPrice;
}

export async function setPrice(db: Kysely<DB>, type: string, amount: number): Promise<void> {
  if (!Number.isSafeInteger(amount) || amount < 0) throw new RangeError('price must be a whole number of kobo, 0 or more');
  await db
    .insertInto('prices')
    .values({ type, amount })
    .onConflict((oc) => oc.column('type').doUpdateSet({ amount, updated_at: new Date() }))
    .execute();
}

/**
 * Gives back kobo charged for work that will not be done (a cancelled verification), with its
 * ledger row, in one statement inside the caller's transaction. Returns the new balance.
 */
export async function refund(db: Kysely<DB>, orgId: string, amount: number, description: string): Promise<number> {
  if (!Number.isSafeInteger(amount) || amount <= 0) throw new RangeError('refund must be a positive whole number of kobo');
  const { rows } = await sql<{ balance_after: number }>`
    with wallet as (
      update organizations set balance = balance + ${amount}::bigint where id = ${orgId} returning balance
    )
    insert into ledger_entries (org_id, kind, amount, balance_after, description)
    select ${orgId}, 'refund', ${amount}::bigint, w.balance, ${description} from wallet w
    returning balance_after`.execute(db);
  if (!rows[0]) throw new RangeError(`no organization ${orgId}`);
  return Number(rows[0].balance_after);
}
