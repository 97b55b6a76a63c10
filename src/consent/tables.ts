import type { ColumnType } from 'kysely';

/**
 * Consent's tables and columns (0021; issue 12, point 4). The verification tables' consent
 * columns are added to their interfaces here, so their modules' files stay as they are.
 */

type Nullable<T> = ColumnType<T | null, T | null | undefined, T | null>;

/** A lookup's consent, beside its usage row (written only when the request carried one). */
export interface LookupConsentsTable {
  usage_id: number;
  org_id: string;
  /** Encrypted (PROTECTED_COLUMNS). */
  consent_reference: string;
  consent_obtained_at: ColumnType<Date, Date | string, never>;
  consent_channel: string;
  created_at: ColumnType<Date, Date | string | undefined, never>;
}

declare module '../platform/db/schema.js' {
  interface DB {
    lookup_consents: LookupConsentsTable;
  }
  interface OrganizationsTable {
    /** Consent is required on every identity lookup and workflow creation (0021). */
    consent_required: ColumnType<boolean, boolean | undefined, boolean>;
  }
}

declare module '../addresses/tables.js' {
  interface AddressVerificationsTable {
    consent_reference: Nullable<string>;
    consent_obtained_at: Nullable<Date>;
    consent_channel: Nullable<string>;
  }
}
declare module '../businesses/tables.js' {
  interface BusinessVerificationsTable {
    consent_reference: Nullable<string>;
    consent_obtained_at: Nullable<Date>;
    consent_channel: Nullable<string>;
  }
}
declare module '../guarantors/tables.js' {
  interface GuarantorVerificationsTable {
    consent_reference: Nullable<string>;
    consent_obtained_at: Nullable<Date>;
    consent_channel: Nullable<string>;
  }
}
declare module '../employments/tables.js' {
  interface EmploymentVerificationsTable {
    consent_reference: Nullable<string>;
    consent_obtained_at: Nullable<Date>;
    consent_channel: Nullable<string>;
  }
}
