import type { ColumnType, Selectable } from 'kysely';
import type { ListEntity } from '../entity.js';

type Timestamp = ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
type Defaulted<T> = ColumnType<T, T | undefined, T>;

/** Where an imported version came from: `vouch lists import` or the sync task. */
export type ListOrigin = 'import' | 'sync';

/** One watchlist an operator loads (migration 0046). */
export interface ScreeningSourcesTable {
  name: string;
  format: string;
  /** null: an import-only source. */
  url: Defaulted<string | null>;
  /** ofac-csv: the companion files' URLs by file name (alt.csv, add.csv). */
  companion_urls: ColumnType<Record<string, string>, string | undefined, string>;
  enabled: Defaulted<boolean>;
  sync_interval_seconds: Defaulted<number>;
  etag: Defaulted<string | null>;
  last_modified: Defaulted<string | null>;
  last_attempt_at: Timestamp;
  last_success_at: Timestamp;
  last_failure_at: Timestamp;
  last_error: Defaulted<string | null>;
  /** 'updated', 'unchanged', 'not_modified' or 'failed': the last sync's outcome. */
  last_outcome: Defaulted<string | null>;
  /** 0 until the first version is loaded. */
  current_version: Defaulted<number>;
  entity_count: Defaulted<number>;
  max_shrink: Defaulted<number>;
  created_at: ColumnType<Date, Date | string | undefined, never>;
}

export interface ScreeningListVersionsTable {
  source: string;
  version: number;
  loaded_at: ColumnType<Date, Date | string | undefined, never>;
  entities: number;
  added: number;
  removed: number;
  changed: number;
  sha256: string;
  origin: ListOrigin;
  /** Set by monitoring once the monitored subjects were screened again against this version. */
  rescreened_at: Timestamp;
}

export interface ScreeningEntitiesTable {
  source: string;
  entity_id: string;
  from_version: number;
  /** null while the row is current. */
  to_version: Defaulted<number | null>;
  data: ColumnType<ListEntity, string, string>;
  digest: string;
}

export type ScreeningSourceRow = Selectable<ScreeningSourcesTable>;
export type ScreeningListVersionRow = Selectable<ScreeningListVersionsTable>;

declare module '../../platform/db/schema.js' {
  interface DB {
    screening_sources: ScreeningSourcesTable;
    screening_list_versions: ScreeningListVersionsTable;
    screening_entities: ScreeningEntitiesTable;
  }
}
