import type { ColumnType } from 'kysely';

/** A data key, wrapped by the key-encryption key (0020). */
export interface DataKeysTable {
  id: string;
  purpose: 'data' | 'index';
  wrapped: string;
  kek_id: string;
  created_at: ColumnType<Date, Date | string | undefined, never>;
  activates_at: ColumnType<Date, Date | string | undefined, Date | string>;
}

declare module '../db/schema.js' {
  interface DB {
    data_keys: DataKeysTable;
  }
}
