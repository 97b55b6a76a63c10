import type { ColumnType, Selectable } from 'kysely';
import type { FieldVisitColumns } from '../agents/visit.js';

export interface AddressVerificationsTable extends FieldVisitColumns {
  applicant_id_key: ColumnType<string | null, string | null | undefined, string | null>;
  parent_kind: ColumnType<string | null, string | null | undefined, never>;
  parent_id: ColumnType<string | null, string | null | undefined, never>;
}

export type AddressRow = Selectable<AddressVerificationsTable>;

declare module '../platform/db/schema.js' {
  interface DB {
    address_verifications: AddressVerificationsTable;
  }
}
