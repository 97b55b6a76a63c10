import type { Kysely } from 'kysely';
import { Batches } from './batches.js';
import { countCharge, coversPrice, recordUsage, type UsageInput, type UsageResult } from './billing.js';
import { runPrepared } from './db/prepared.js';
import type { DB } from './db/schema.js';

const MAX_BATCH = 256;

const CHARGE_BATCH = `select usage_id, paid, price
  from vouch_charge_batch($1::uuid, $2::text[], $3::bigint[], $4::text[], $5::text[], $6::integer[], $7::text[])`;

/**
 * Charges standalone live work (identity lookups) to organizations' wallets.
 *
 * A wallet is one row, and every charge must lock it until its commit reaches the disk, so
 * charging each lookup in its own transaction caps an organization at a few hundred lookups a
 * second. Instead each process keeps at most one charge transaction in flight per organization;
 * the charges that arrive meanwhile wait and go together in the next one (group commit,
 * src/platform/batches.ts). At low load a batch holds one charge and nothing waits. Charges are
 * granted in arrival order while the balance covers them; the rest are refused (402) and
 * recorded as `insufficient_funds`. The row lock still serialises batches across processes, so
 * no wallet is ever overdrawn.
 */
export class WalletCharger {
  private readonly batches: Batches<{ input: UsageInput; outcome: string }, UsageResult>;

  constructor(private readonly db: Kysely<DB>) {
    this.batches = new Batches((orgId, charges) => chargeBatch(db, orgId, charges), MAX_BATCH);
  }

  /** Records the work and, in live mode, charges it; `paid: false` means nothing was charged. */
  charge(input: UsageInput, outcome = 'success'): Promise<UsageResult> {
    if (input.mode === 'test') {
      return recordUsage(this.db, input, outcome).then((usageId) => ({ usageId, paid: true, price: 0 }));
    }
    return this.batches.add(input.orgId, { input, outcome });
  }
}

/**
 * Charges a batch of one organization's live work in one statement (migration 0014's
 * `vouch_charge_batch`): the wallet row is locked only while that statement runs.
 */
async function chargeBatch(db: Kysely<DB>, orgId: string, batch: { input: UsageInput; outcome: string }[]): Promise<UsageResult[]> {
  const column = <T>(pick: (input: UsageInput, outcome: string) => T): T[] => batch.map((charge) => pick(charge.input, charge.outcome));
  const rows = await runPrepared<{ usage_id: string | number; paid: boolean; price: string | number }>(db, CHARGE_BATCH, [
    orgId,
    column((input) => input.billable.type),
    column((input) => input.billable.defaultPrice),
    column((input) => input.subject),
    column((input) => input.source ?? null),
    column((input) => (input.latencyMs === undefined ? null : input.latencyMs)),
    column((_, outcome) => outcome),
  ]);
  if (rows.length !== batch.length) throw new Error(`charged ${rows.length} of ${batch.length} for ${orgId}`);
  return rows.map((row, i) => {
    const result = { usageId: Number(row.usage_id), paid: row.paid, price: Number(row.price) };
    if (result.paid) countCharge(batch[i]!.input.billable.type, result.price);
    return result;
  });
}

/**
 * The pre-work wallet check of identity lookups (`coversPrice`) made on its own, shared by
 * concurrent requests of one organization and price type (src/platform/batches.ts): each answer
 * reads a balance at least as recent as its request (the guarantee of one SELECT per request,
 * which the existence-oracle fix needs), while a busy organization pays one round trip per batch
 * instead of one per lookup. A lookup that starts with a read of the embedded registry makes the
 * same check in that read's statement instead (`EmbeddedRegistry.findIfCovered`).
 */
export class CoverChecks {
  private readonly batches: Batches<Pick<UsageInput, 'orgId' | 'mode' | 'billable'>, boolean>;

  constructor(db: Kysely<DB>) {
    this.batches = new Batches(async (_, works) => {
      const covered = await coversPrice(db, works[0]!);
      return works.map(() => covered);
    }, Infinity);
  }

  covers(work: Pick<UsageInput, 'orgId' | 'mode' | 'billable'>): Promise<boolean> {
    if (work.mode === 'test') return Promise.resolve(true);
    return this.batches.add(`${work.orgId}\u0000${work.billable.type}\u0000${work.billable.defaultPrice}`, work);
  }
}
