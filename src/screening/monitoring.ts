import { sql, type Kysely, type Transaction } from 'kysely';
import { repeatUntilStopped, type BackgroundTask, type TaskLogger } from '../platform/background.js';
import { chargeUsage } from '../platform/billing.js';
import type { DB } from '../platform/db/schema.js';
import { enqueueEvent } from '../webhooks/events.js';
import { addMonth, SCREENING_BILLABLES } from './billing.js';
import type { IndexedEntity } from './entity.js';
import { changedEntities } from './lists/index-provider.js';
import { ScreeningIndex } from './matching/index.js';
import { renderHit, renderScreening } from './render.js';
import { hitsOf, insertHits } from './repository.js';
import type { ScreeningMatcher } from './service.js';
import { stateOf } from './states.js';
import type { ScreeningRow } from './tables.js';
import { screeningSubjectOf } from './validate.js';

/**
 * Monitoring (docs/screening.md, "Monitoring"): each list version not re-screened yet is claimed
 * (FOR UPDATE SKIP LOCKED: two workers never take the same one), a small index is built over the
 * entities that version added or changed, and every live monitored screening that was screened
 * against the source before that version is screened against it, a page at a time, decrypting
 * as it goes. A new hit (an entity of that source not already hit on the screening) is stored,
 * the screening waits for review again, and `screening.match` is queued in the same transaction.
 * The version is marked re-screened by that transaction too: a version is done once, whole.
 *
 * The same task charges monitoring: on each monthly anniversary of a monitored live screening
 * (a month is in the screening's price), the `screening_monitoring` price; a wallet that cannot
 * pay ends the monitoring (`unpaid`, webhook `screening.monitoring_ended`).
 */

const PAGE = 500;

export interface MonitoringDeps {
  db: Kysely<DB>;
  now?: () => Date;
  /** The index over a version's changed entities (the matcher's ScreeningIndex unless a test says otherwise). */
  indexOf?: (entities: readonly IndexedEntity[]) => ScreeningMatcher;
}

const defaultIndex = (entities: readonly IndexedEntity[]) => new ScreeningIndex(entities);

/** What re-screening one version did. */
export interface RescreenResult {
  source: string;
  version: number;
  changed: number;
  screened: number;
  newHits: number;
}

/**
 * Screens the monitored subjects against what `version` of `source` added or changed, inside
 * `trx` (which holds the version's row). Exported for tests; the task calls it through
 * `rescreenPending`.
 */
export async function rescreenVersion(deps: MonitoringDeps, source: string, version: number, trx?: Transaction<DB>): Promise<RescreenResult> {
  if (!trx) return deps.db.transaction().execute((own) => rescreenVersion(deps, source, version, own));
  const now = (deps.now ?? (() => new Date()))();
  const result: RescreenResult = { source, version, changed: 0, screened: 0, newHits: 0 };
  // Read once someone needs them: a new install, or a list nobody monitored against, reads no entity.
  let index: ScreeningMatcher | undefined;
  for (let after = 0; ; ) {
    const page = await monitoredPage(trx, after);
    for (const row of page) {
      if (!dueFor(row, source, version)) continue;
      if (!index) {
        const entities = await changedEntities(trx, source, version);
        result.changed = entities.length;
        index = (deps.indexOf ?? defaultIndex)(entities);
      }
      if (result.changed === 0) break;
      result.screened++;
      const matches = index.screen(screeningSubjectOf(row.subject), { threshold: row.threshold, limit: 50 });
      if (matches.length === 0) continue;
      const added = await insertHits(trx, Number(row.id), matches, { now, fromMonitoring: true });
      if (added.length === 0) continue;
      result.newHits += added.length;
      await reportNewHits(trx, row, added.map((hit) => Number(hit.id)), now);
    }
    if (page.length < PAGE || (index && result.changed === 0)) break;
    after = Number(page[page.length - 1]!.id);
  }
  await trx.updateTable('screening_list_versions').set({ rescreened_at: now }).where('source', '=', source).where('version', '=', version).execute();
  return result;
}

/**
 * Live monitored screenings in id order after `after`, their subjects decrypted. The conditions
 * are literals, not parameters, so that even a generic plan matches them to the partial index
 * `screenings_monitored` and reads it in id order, stopping at the page's end: with `monitored =
 * $1` and the list conditions in SQL, PostgreSQL read every remaining row for each page
 * (0.74 s a page at 1,000,000 monitored screenings; docs/benchmarks.md, thirty-second session).
 */
function monitoredPage(trx: Transaction<DB>, after: number): Promise<ScreeningRow[]> {
  return trx
    .selectFrom('screenings')
    .selectAll()
    .where(sql<boolean>`monitored and mode = 'live'`)
    .where('id', '>', after)
    .orderBy('id')
    .limit(PAGE)
    .execute();
}

/** Whether the screening may include `source` and was screened against an older version of it (or before it was loaded). */
function dueFor(row: ScreeningRow, source: string, version: number): boolean {
  if (row.sources !== null && !row.sources.includes(source)) return false;
  return !row.lists.some((list) => list.source === source && list.version >= version);
}

/** The screening waits for review again (unless a true match already confirmed it) and `screening.match` carries it with its new hits. */
async function reportNewHits(trx: Transaction<DB>, row: ScreeningRow, newHitIds: readonly number[], now: Date): Promise<void> {
  const id = Number(row.id);
  const hits = (await hitsOf(trx, [id])).get(id) ?? [];
  const state = stateOf(hits.map((hit) => hit.decision));
  const updated = await trx.updateTable('screenings').set({ state, updated_at: now }).where('id', '=', id).returningAll().executeTakeFirstOrThrow();
  const fresh = new Set(newHitIds);
  await enqueueEvent(
    trx,
    {
      orgId: row.org_id,
      mode: row.mode,
      type: 'screening.match',
      data: { ...renderScreening(updated, hits), newHits: hits.filter((hit) => fresh.has(Number(hit.id))).map(renderHit) },
    },
    now,
  );
}

/** Claims and re-screens the versions not re-screened yet, oldest first; returns what each did. */
export async function rescreenPending(deps: MonitoringDeps, stopped: () => boolean = () => false): Promise<RescreenResult[]> {
  const done: RescreenResult[] = [];
  while (!stopped()) {
    const result = await deps.db.transaction().execute(async (trx) => {
      const claimed = await trx
        .selectFrom('screening_list_versions')
        .select(['source', 'version'])
        .where('rescreened_at', 'is', null)
        .orderBy('loaded_at')
        .orderBy('version')
        .limit(1)
        .forUpdate()
        .skipLocked()
        .executeTakeFirst();
      return claimed ? rescreenVersion(deps, claimed.source, claimed.version, trx) : undefined;
    });
    if (!result) break;
    done.push(result);
  }
  return done;
}

/**
 * Charges the monitoring of live screenings whose paid month has ended (a month more each time);
 * ends the monitoring of those whose wallet cannot pay. Returns how many were charged and ended.
 */
export async function chargeMonitoring(deps: MonitoringDeps, batch = 100): Promise<{ charged: number; ended: number }> {
  const now = (deps.now ?? (() => new Date()))();
  let charged = 0;
  let ended = 0;
  for (;;) {
    const count = await deps.db.transaction().execute(async (trx) => {
      const due = await trx
        .selectFrom('screenings')
        .selectAll()
        .where('monitored', '=', true)
        .where('mode', '=', 'live')
        .where('monitoring_paid_until', '<=', now)
        .orderBy('id')
        .limit(batch)
        .forUpdate()
        .skipLocked()
        .execute();
      for (const row of due) {
        const scope = { orgId: row.org_id, mode: row.mode };
        const usage = await chargeUsage(trx, { ...scope, billable: SCREENING_BILLABLES.screening_monitoring, subject: `reference ${row.reference}` });
        if (usage.paid) {
          charged++;
          await trx.updateTable('screenings').set({ monitoring_paid_until: addMonth(row.monitoring_paid_until!), updated_at: now }).where('id', '=', row.id).execute();
          continue;
        }
        ended++;
        const updated = await trx
          .updateTable('screenings')
          .set({ monitored: false, monitoring_ended_at: now, monitoring_end_reason: 'unpaid', updated_at: now })
          .where('id', '=', row.id)
          .returningAll()
          .executeTakeFirstOrThrow();
        const hits = (await hitsOf(trx, [Number(row.id)])).get(Number(row.id)) ?? [];
        await enqueueEvent(trx, { ...scope, type: 'screening.monitoring_ended', data: renderScreening(updated, hits) }, now);
      }
      return due.length;
    });
    if (count < batch) break;
  }
  return { charged, ended };
}

/** How often the worker looks for new list versions and monitoring due: list syncs run every few minutes at most. */
export const MONITORING_INTERVAL_MS = 60_000;

/** Background task: re-screens monitored subjects as lists change, and charges monitoring monthly. */
export function screeningMonitoringTask(options: { intervalMs?: number; now?: () => Date } = {}): BackgroundTask {
  return {
    name: 'screening monitoring',
    async start({ database, logger }) {
      const deps: MonitoringDeps = { db: database.db, ...(options.now ? { now: options.now } : {}) };
      return repeatUntilStopped('screening monitoring', logger, options.intervalMs ?? MONITORING_INTERVAL_MS, async (stopped) => {
        const results = await rescreenPending(deps, stopped);
        const billing = await chargeMonitoring(deps);
        logRun(logger, results, billing);
      });
    },
  };
}

/** Counts only: never a subject's name. */
function logRun(logger: TaskLogger, results: readonly RescreenResult[], billing: { charged: number; ended: number }): void {
  for (const r of results) logger.info({ source: r.source, version: r.version, changed: r.changed, screened: r.screened, newHits: r.newHits }, 'screening monitoring: version re-screened');
  if (billing.charged > 0 || billing.ended > 0) logger.info(billing, 'screening monitoring: monthly charges');
}
