import { sql, type RawBuilder } from 'kysely';
import { ADDRESS_SEQUENCE } from '../../addresses/service.js';
import { BUSINESS_SEQUENCE } from '../../businesses/service.js';
import { EMPLOYMENT_SEQUENCE } from '../../employments/repository.js';
import { GUARANTOR_SEQUENCE } from '../../guarantors/repository.js';

/** The workflow verifications the explorer shows. */
export type VerificationKind = 'address' | 'business' | 'guarantor' | 'employment';

/** The explorer's status words, the same for every kind. */
export type ExplorerStatus = 'in_progress' | 'verified' | 'not_verified' | 'cancelled';

/** The columns a list row is made from, whatever the kind (absent ones selected as null). */
export interface ListSource {
  id: number;
  reference: string;
  raw_state: string;
  created_at: Date;
  completed_at: Date | null;
  cancelled_at: Date | null;
  applicant: { firstname?: string; lastname?: string } | null;
  name: string | null;
  firstname: string | null;
  lastname: string | null;
  employer_name: string | null;
}

export interface KindTable {
  table: 'address_verifications' | 'business_verifications' | 'guarantor_verifications' | 'employment_verifications';
  /** The `sequences` kind numbering the rows (unfiltered pages and the exact total come from it). */
  sequence: string;
  /** The column holding the raw state. */
  stateColumn: 'status' | 'state';
  /**
   * The raw state as an explorer status, in SQL. Written exactly as in the 0009 indexes
   * (`*_explorer_status`), so a status filter is an index range scan.
   */
  explorerStatus: RawBuilder<string>;
  /** The kind's own columns of ListSource (the rest are selected as null). */
  columns: readonly ('applicant' | 'name' | 'firstname' | 'lastname' | 'employer_name')[];
  /** Who or what is being verified, for the list. */
  subject(row: ListSource): string;
}

const FIELD_STATUS = sql<string>`(case status when 'pending' then 'in_progress' when 'visiting' then 'in_progress' else status end)`;

const fullName = (person: { firstname?: string | null; lastname?: string | null } | null | undefined) =>
  [person?.firstname, person?.lastname].filter((part) => part && part.trim() !== '').join(' ');

export const KIND_TABLES: Record<VerificationKind, KindTable> = {
  address: {
    table: 'address_verifications',
    sequence: ADDRESS_SEQUENCE,
    stateColumn: 'status',
    explorerStatus: FIELD_STATUS,
    columns: ['applicant'],
    subject: (row) => fullName(row.applicant),
  },
  business: {
    table: 'business_verifications',
    sequence: BUSINESS_SEQUENCE,
    stateColumn: 'status',
    explorerStatus: FIELD_STATUS,
    columns: ['name'],
    subject: (row) => row.name ?? '',
  },
  guarantor: {
    table: 'guarantor_verifications',
    sequence: GUARANTOR_SEQUENCE,
    stateColumn: 'state',
    explorerStatus: sql<string>`(case state when 'awaiting_address' then 'in_progress' else state end)`,
    columns: ['applicant', 'firstname', 'lastname'],
    subject: (row) => [fullName(row), fullName(row.applicant) && `for ${fullName(row.applicant)}`].filter(Boolean).join(' '),
  },
  employment: {
    table: 'employment_verifications',
    sequence: EMPLOYMENT_SEQUENCE,
    stateColumn: 'state',
    explorerStatus: sql<string>`state`,
    columns: ['applicant', 'employer_name'],
    subject: (row) => [fullName(row.applicant), row.employer_name && `at ${row.employer_name}`].filter(Boolean).join(' '),
  },
};

/** A raw state (pending, visiting, awaiting_address, ...) as the explorer's status word. */
export function explorerStatusOf(raw: string): ExplorerStatus {
  if (raw === 'verified' || raw === 'not_verified' || raw === 'cancelled') return raw;
  return 'in_progress';
}
