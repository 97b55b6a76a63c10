import { sql, type Kysely } from 'kysely';
import { countCharge, coversPrice, recordUsage, type UsageInput, type UsageResult } from './billing.js';
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

/**
 * Charges a batch of one organization's live work in one statement (migration 0014's
 * `vouch_charge_batch`): the wallet row is locked only while that statement runs.
 */
async function chargeBatch(db: Kysely<DB>, orgId: string, batch: PendingCharge[]): Promise<UsageResult[]> {
  const column = <T>(pick: (input: UsageInput, pending: PendingCharge) => T): T[] => batch.map((pending) => pick(pending.input, pending));
  const { rows } = await sql<{ usage_id: string | number; paid: boolean; price: string | number }>`
    select usage_id, paid, price from vouch_charge_batch(
      ${orgId}::uuid,
      ${column((input) => input.billable.type)}::text[],
      ${column((input) => input.billable.defaultPrice)}::bigint[],
      ${column((input) => input.subject)}::text[],
      ${column((input) => input.source ?? null)}::text[],
      ${column((input) => (input.latencyMs === undefined ? null : input.latencyMs))}::integer[],
      ${column((_, pending) => pending.outcome)}::text[]
    )`.execute(db);
  if (rows.length !== batch.length) throw new Error(`charged ${rows.length} of ${batch.length} for ${orgId}`);
  return rows.map((row) => ({ usageId: Number(row.usage_id), paid: row.paid, price: Number(row.price) }));
}

interface WaitingCheck {
  resolve(covered: boolean): void;
  reject(error: unknown): void;
}

/**
 * The pre-work wallet check of identity lookups (`coversPrice`), shared by concurrent requests of
 * one organization and price type: while one check's statement runs, the checks that arrive wait
 * and are answered together by the next statement, which starts after every one of them arrived.
 * So each answer reads a balance at least as recent as its request (the guarantee of one SELECT
 * per request, which the existence-oracle fix needs), while a busy organization pays one round trip
 * per batch instead of one per lookup. At low load a batch holds one check and nothing waits.
 */
export class CoverChecks {
  private readonly pending = new Map<string, WaitingCheck[]>();

  constructor(private readonly db: Kysely<DB>) {}

  covers(work: Pick<UsageInput, 'orgId' | 'mode' | 'billable'>): Promise<boolean> {
    if (work.mode === 'test') return Promise.resolve(true);
    const key = `${work.orgId}\u0000${work.billable.type}\u0000${work.billable.defaultPrice}`;
    return new Promise((resolve, reject) => {
      const queue = this.pending.get(key);
      if (queue) {
        queue.push({ resolve, reject });
        return;
      }
      const started: WaitingCheck[] = [{ resolve, reject }];
      this.pending.set(key, started);
      void this.drain(key, started, work);
    });
  }

  private async drain(key: string, queue: WaitingCheck[], work: Pick<UsageInput, 'orgId' | 'mode' | 'billable'>): Promise<void> {
    while (queue.length > 0) {
      // Everyone waiting now arrived before this statement starts.
      const batch = queue.splice(0);
      try {
        const covered = await coversPrice(this.db, work);
        for (const check of batch) check.resolve(covered);
      } catch (error) {
        for (const check of batch) check.reject(error);
      }
    }
    this.pending.delete(key);
  }
}
