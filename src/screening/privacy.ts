import { sql, type Kysely } from 'kysely';
import type { DB } from '../platform/db/schema.js';

/**
 * Screenings under the retention job (docs/screening.md, "Data protection"): a screening that is
 * not monitored is deleted with its hits once its last activity (made, reviewed, monitoring
 * ended: `updated_at`) is older than its organization's verification period. A monitored one is
 * kept while monitored. Batched and idempotent like the rest of the job.
 */
export async function applyScreeningRetention(
  db: Kysely<DB>,
  { now, verificationDays, batchSize = 200, shouldStop }: { now: Date; verificationDays: number; batchSize?: number; shouldStop?: () => boolean },
): Promise<number> {
  let deleted = 0;
  for (;;) {
    const { rows } = await sql<{ id: number }>`
      select s.id from screenings s left join retention_settings r on r.org_id = s.org_id
       where not s.monitored
         and s.updated_at < (${now}::timestamptz - make_interval(days => coalesce(r.verification_days, ${verificationDays}::int)))
       order by s.updated_at limit ${batchSize}`.execute(db);
    const ids = rows.map((row) => Number(row.id));
    if (ids.length > 0) deleted += Number((await db.deleteFrom('screenings').where('id', 'in', ids).executeTakeFirst()).numDeletedRows);
    if (ids.length < batchSize || shouldStop?.() === true) return deleted;
  }
}
