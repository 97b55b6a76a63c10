import { sql, type Kysely } from 'kysely';
import type { DB } from '../platform/db/schema.js';
import { repeatUntilStopped, type BackgroundTask } from '../platform/background.js';

/** Deliveries deleted per statement: each statement (with its attempt rows) stays short. */
export const RETENTION_BATCH = 1_000;
/** How often the worker looks for deliveries past their retention. */
export const RETENTION_INTERVAL_MS = 60 * 60 * 1000;

const DAY_MS = 24 * 60 * 60 * 1000;

/**
 * Deletes delivered and failed deliveries that ended before `before`, with their attempt logs
 * (ON DELETE CASCADE), `batchSize` deliveries per statement until none is left; returns how
 * many. A pending delivery is never deleted, and neither is one an operator redelivers
 * meanwhile (the delete re-checks the status of each row it locked). Rows another worker is
 * deleting are skipped, so several workers may run it at once. `shouldStop` is asked between
 * batches.
 */
export async function deleteEndedDeliveries(
  db: Kysely<DB>,
  before: Date,
  options: { batchSize?: number; shouldStop?: () => boolean } = {},
): Promise<number> {
  const batchSize = options.batchSize ?? RETENTION_BATCH;
  let total = 0;
  for (;;) {
    const { rows } = await sql<{ deleted: number }>`
      with gone as (
        delete from webhook_deliveries
         where id in (
                 select id from webhook_deliveries
                  where status <> 'pending' and coalesce(delivered_at, next_attempt_at) < ${before}
                  order by coalesce(delivered_at, next_attempt_at)
                  limit ${batchSize}
                  for update skip locked)
           and status <> 'pending'
        returning 1
      )
      select count(*)::integer as deleted from gone`.execute(db);
    const deleted = rows[0]?.deleted ?? 0;
    total += deleted;
    if (deleted < batchSize || options.shouldStop?.()) return total;
  }
}

export interface RetentionTaskOptions {
  /** The clock (tests fix it). */
  now?: () => Date;
  intervalMs?: number;
  batchSize?: number;
}

/**
 * Background task: every `intervalMs` (and at start), deletes the deliveries that ended more than
 * VOUCH_WEBHOOK_RETENTION_DAYS ago.
 */
export function webhookRetentionTask(options: RetentionTaskOptions = {}): BackgroundTask {
  const name = 'webhook retention';
  const now = options.now ?? (() => new Date());
  const intervalMs = options.intervalMs ?? RETENTION_INTERVAL_MS;
  return {
    name,
    async start({ database, config, logger }) {
      return repeatUntilStopped(name, logger, intervalMs, async (stopped) => {
        const before = new Date(now().getTime() - config.webhookRetentionDays * DAY_MS);
        const count = await deleteEndedDeliveries(database.db, before, { batchSize: options.batchSize, shouldStop: stopped });
        if (count > 0) logger.info({ count, before: before.toISOString() }, `${name}: deleted ${count} ended webhook deliveries`);
      });
    },
  };
}
