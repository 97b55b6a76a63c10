import type { ColumnType } from 'kysely';

/** An organization's retention periods in days (0022); null: the default (src/privacy/retention.ts). */
export interface RetentionSettingsTable {
  org_id: string;
  lookup_days: number | null;
  verification_days: number | null;
  photo_days: number | null;
  webhook_days: number | null;
  updated_at: ColumnType<Date, Date | string | undefined, Date | string>;
}

/** A data-subject request answered (0022): the person only by blind indexes. */
export interface SubjectRequestsTable {
  id: string;
  kind: 'export' | 'erase';
  identifiers: ColumnType<{ kind: string; index: string }[], string, string>;
  org_id: string | null;
  actor: string;
  found: ColumnType<Record<string, number>, string, string>;
  erased: ColumnType<Record<string, number> | null, string | null | undefined, string | null>;
  created_at: ColumnType<Date, Date | string | undefined, never>;
}

declare module '../platform/db/schema.js' {
  interface DB {
    retention_settings: RetentionSettingsTable;
    subject_requests: SubjectRequestsTable;
  }
}
