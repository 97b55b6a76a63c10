import type { Kysely } from 'kysely';
import type { DB } from '../../platform/db/schema.js';
import { formatInterval } from './sources.js';

/** One source as `vouch lists list` and the console show it: what serves, and how fresh it is. */
export interface ListSourceStatus {
  name: string;
  format: string;
  url: string | null;
  enabled: boolean;
  /** The sync interval, like "15m"; null for an import-only source. */
  every: string | null;
  version: number;
  entities: number;
  /** When the serving version was loaded; null before the first. */
  loadedAt: string | null;
  lastSuccessAt: string | null;
  lastFailureAt: string | null;
  lastError: string | null;
  /** updated, unchanged, not_modified or failed; null before the first sync. */
  lastOutcome: string | null;
  /** When the worker fetches it next (now or earlier: due); null without a URL or when disabled. */
  nextSyncAt: string | null;
  maxShrink: number;
}

const iso = (value: Date | null) => (value ? value.toISOString() : null);

export async function listSourceStatuses(db: Kysely<DB>): Promise<ListSourceStatus[]> {
  const rows = await db
    .selectFrom('screening_sources as s')
    .leftJoin('screening_list_versions as v', (join) => join.onRef('v.source', '=', 's.name').onRef('v.version', '=', 's.current_version'))
    .selectAll('s')
    .select('v.loaded_at')
    .orderBy('s.name')
    .execute();
  return rows.map((row) => {
    const syncs = row.enabled && row.url !== null;
    const next = syncs ? (row.last_attempt_at ? new Date(row.last_attempt_at.getTime() + row.sync_interval_seconds * 1000) : new Date(row.created_at)) : null;
    return {
      name: row.name,
      format: row.format,
      url: row.url,
      enabled: row.enabled,
      every: row.url === null ? null : formatInterval(row.sync_interval_seconds),
      version: row.current_version,
      entities: row.entity_count,
      loadedAt: iso(row.loaded_at),
      lastSuccessAt: iso(row.last_success_at),
      lastFailureAt: iso(row.last_failure_at),
      lastError: row.last_error,
      lastOutcome: row.last_outcome,
      nextSyncAt: iso(next),
      maxShrink: row.max_shrink,
    };
  });
}
