import type { ColumnType, Selectable } from 'kysely';
import type { BusinessFindings, FieldVisitColumns } from '../agents/visit.js';

export interface BusinessVerificationsTable extends FieldVisitColumns {
  name: string;
  type: ColumnType<'Formal' | 'Informal' | null, 'Formal' | 'Informal' | null | undefined, never>;
  rc_number: ColumnType<string, string | undefined, never>;
  can_contact_poc: ColumnType<boolean, boolean | undefined, never>;
  findings: ColumnType<BusinessFindings | null, string | null | undefined, string | null>;
  address_source: ColumnType<AddressSource, AddressSource | undefined, never>;
  /** The screening of the company made at creation, when the organization screens business verifications (0049). */
  screening_id: ColumnType<number | null, number | null | undefined, number | null>;
}

/** Where the visited address came from: the request, or the company's head office in the corporate registry. */
export type AddressSource = 'applicant' | 'corporate_registry';

export type BusinessRow = Selectable<BusinessVerificationsTable>;

declare module '../platform/db/schema.js' {
  interface DB {
    business_verifications: BusinessVerificationsTable;
  }
}
