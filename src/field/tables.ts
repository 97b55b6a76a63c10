import type { ColumnType } from 'kysely';
import type { FieldTaskKind } from '../agents/tables.js';

/** A field-app report's Idempotency-Key and the answer its report got (migration 0016). */
export interface FieldReportKeysTable {
  agent_id: string;
  key: string;
  fingerprint: string;
  kind: FieldTaskKind;
  verification_id: number;
  response: ColumnType<unknown, string, string>;
  created_at: ColumnType<Date, Date | string | undefined, never>;
}

declare module '../platform/db/schema.js' {
  interface DB {
    field_report_keys: FieldReportKeysTable;
  }
}
