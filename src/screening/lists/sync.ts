import { sql, type Kysely } from 'kysely';
import { repeatUntilStopped, type BackgroundTask, type TaskLogger } from '../../platform/background.js';
import type { DB } from '../../platform/db/schema.js';
import { metrics } from '../../platform/metrics.js';
import type { ListFormat } from '../formats/index.js';
import { download, DownloadError } from './download.js';
import { importList, ListImportError, type ListFiles } from './import.js';
import { companionUrls, getSource } from './sources.js';
import type { ScreeningSourceRow } from './tables.js';

export type SyncOutcomeKind = 'updated' | 'unchanged' | 'not_modified' | 'failed';

export interface SyncOutcome {
  source: string;
  outcome: SyncOutcomeKind;
  /** The version serving after the sync (unchanged by a failure). */
  version: number;
  entities: number;
  added: number;
  removed: number;
  changed: number;
  /** Why it failed: for the operator (stored in last_error), never logged with list content. */
  error?: string;
}

export interface SyncOptions {
  /** config.allowPrivateUrls. */
  allowPrivate: boolean;
  /** The whole download of one file (default 120 s). */
  timeoutMs?: number;
  /** The largest file taken (default 256 MB: the UK CSV is about 50 MB, the EU XML 26 MB). */
  maxBytes?: number;
  now?: () => Date;
  logger?: TaskLogger;
}

export const SYNC_DEFAULTS = { timeoutMs: 120_000, maxBytes: 256 * 1024 * 1024 } as const;

/** How often the worker looks for sources whose interval has passed; each source has its own interval (default 15 minutes). */
export const SYNC_CHECK_INTERVAL_MS = 30_000;

/** The failure kind logged beside the source: never the message, which can quote the file. */
function failureKind(err: unknown): string {
  if (err instanceof DownloadError) return 'download';
  if (err instanceof ListImportError) return err.reason;
  return 'error';
}

/** The files of a changed source, with the validators to save once they are imported (a refused file is fetched again next time). */
async function fetchFiles(row: ScreeningSourceRow, options: SyncOptions): Promise<{ files: ListFiles; etag: string | null; lastModified: string | null } | 'not_modified'> {
  const settings = { timeoutMs: options.timeoutMs ?? SYNC_DEFAULTS.timeoutMs, maxBytes: options.maxBytes ?? SYNC_DEFAULTS.maxBytes, allowPrivate: options.allowPrivate };
  const main = await download(row.url!, { ...settings, etag: row.etag, lastModified: row.last_modified });
  if (main.status === 'not_modified') return 'not_modified';
  const companions: Record<string, Buffer> = {};
  // The companions are published with the main file: they are fetched whole whenever it changed.
  for (const [name, url] of Object.entries(companionUrls(row.format as ListFormat, row.url!, row.companion_urls))) {
    const file = await download(url, settings);
    if (file.status !== 'ok') throw new DownloadError(`${name}: no file in the answer`);
    companions[name] = file.body;
  }
  return { files: { main: main.body, companions }, etag: main.etag, lastModified: main.lastModified };
}

/**
 * Fetches one source now and imports what changed. A download that fails, or a file that is
 * refused (bad line, truncated, shrinking past the guard), records last_failure_at and
 * last_error and changes nothing else: the current version keeps serving. A 304 is a success.
 */
export async function syncSource(db: Kysely<DB>, name: string, options: SyncOptions): Promise<SyncOutcome> {
  const now = options.now ?? (() => new Date());
  const row = await getSource(db, name);
  const base = { source: name, version: row.current_version, entities: row.entity_count, added: 0, removed: 0, changed: 0 };
  if (!row.url) return { ...base, outcome: 'failed', error: `source ${name} has no URL to sync from: it takes vouch lists import` };
  await db.updateTable('screening_sources').set({ last_attempt_at: now() }).where('name', '=', name).execute();
  try {
    const fetched = await fetchFiles(row, options);
    if (fetched === 'not_modified') {
      await db.updateTable('screening_sources').set({ last_success_at: now(), last_outcome: 'not_modified' }).where('name', '=', name).execute();
      metrics.screeningListSyncs.inc({ source: name, outcome: 'not_modified' });
      return { ...base, outcome: 'not_modified' };
    }
    const result = await importList(db, { source: name, format: row.format as ListFormat, files: fetched.files, origin: 'sync' });
    const outcome: SyncOutcomeKind = result.unchanged ? 'unchanged' : 'updated';
    await db
      .updateTable('screening_sources')
      .set({ last_success_at: now(), last_outcome: outcome, etag: fetched.etag, last_modified: fetched.lastModified })
      .where('name', '=', name)
      .execute();
    metrics.screeningListSyncs.inc({ source: name, outcome });
    if (!result.unchanged) {
      options.logger?.info({ source: name, version: result.version, entities: result.entities, added: result.added, removed: result.removed, changed: result.changed }, `list sync: ${name} version ${result.version}`);
    }
    const { unchanged: _unchanged, ...counts } = result;
    return { ...counts, outcome };
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    await db.updateTable('screening_sources').set({ last_failure_at: now(), last_error: message.slice(0, 1000), last_outcome: 'failed' }).where('name', '=', name).execute();
    metrics.screeningListSyncs.inc({ source: name, outcome: 'failed' });
    metrics.screeningListSyncFailures.inc({ source: name });
    const line = err instanceof ListImportError ? err.line : undefined;
    options.logger?.warn({ source: name, version: row.current_version, reason: failureKind(err), line }, `list sync: ${name} failed; version ${row.current_version} keeps serving`);
    return { ...base, outcome: 'failed', error: message };
  }
}

/**
 * Claims the next enabled source with a URL whose interval has passed: its last_attempt_at moves
 * to now in the same statement, and a source another worker holds is skipped (SKIP LOCKED), so
 * with several workers each source is fetched by one of them.
 */
async function claimDueSource(db: Kysely<DB>, now: Date): Promise<string | undefined> {
  const { rows } = await sql<{ name: string }>`
    update screening_sources set last_attempt_at = ${now}
    where name = (
      select name from screening_sources
      where enabled and url is not null
        and (last_attempt_at is null or last_attempt_at <= ${now}::timestamptz - make_interval(secs => sync_interval_seconds))
      order by last_attempt_at nulls first, name
      limit 1
      for update skip locked
    )
    returning name`.execute(db);
  return rows[0]?.name;
}

/** Every source due now, one after another; returns what each sync did. */
export async function syncDueSources(db: Kysely<DB>, options: SyncOptions & { stopped?: () => boolean }): Promise<SyncOutcome[]> {
  const now = options.now ?? (() => new Date());
  const outcomes: SyncOutcome[] = [];
  for (;;) {
    if (options.stopped?.()) break;
    const name = await claimDueSource(db, now());
    if (!name) break;
    outcomes.push(await syncSource(db, name, options));
  }
  return outcomes;
}

/** Background task: keeps every source with a URL fresh on its own interval (docs/screening-lists.md). */
export function listSyncTask(options: { checkIntervalMs?: number; timeoutMs?: number; maxBytes?: number; now?: () => Date } = {}): BackgroundTask {
  const name = 'screening list sync';
  return {
    name,
    async start({ database, config, logger }) {
      return repeatUntilStopped(name, logger, options.checkIntervalMs ?? SYNC_CHECK_INTERVAL_MS, async (stopped) => {
        await syncDueSources(database.db, { allowPrivate: config.allowPrivateUrls, timeoutMs: options.timeoutMs, maxBytes: options.maxBytes, now: options.now, logger, stopped });
      });
    },
  };
}
