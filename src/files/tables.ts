import type { ColumnType } from 'kysely';
import type { Mode } from '../platform/db/schema.js';

export interface UploadedFilesTable {
  id: string;
  org_id: string;
  mode: Mode;
  content_type: string;
  size: number;
  sha256: string;
  /** Whether the stored bytes are encrypted (0020): false only for files stored before encryption, until the first start seals them. */
  sealed: ColumnType<boolean, boolean | undefined, boolean>;
  created_at: ColumnType<Date, Date | string | undefined, never>;
}

declare module '../platform/db/schema.js' {
  interface DB {
    uploaded_files: UploadedFilesTable;
  }
}
