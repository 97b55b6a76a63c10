import type { ColumnType, Generated, Selectable } from 'kysely';
import type { Mode } from '../platform/db/schema.js';

type Json<T> = ColumnType<T, string, string>;
type Timestamp = ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;

export type EmploymentState = 'in_progress' | 'verified' | 'not_verified' | 'cancelled';

export interface EmploymentApplicant {
  firstname: string;
  lastname: string;
  middlename: string;
  phone: string;
  gender: string;
  photo: string;
  /** DD-MM-YYYY when given (risk level HIGH); kept, not shown in the record. */
  birthdate: string;
}

/** What the employer answered. Dates are YYYY-MM-DD; `endDate` null while still employed. */
export interface EmploymentAttestation {
  decision: 'confirmed' | 'not_employee' | 'declined';
  title?: string;
  startDate?: string;
  endDate?: string | null;
  rehire?: boolean;
  employmentType?: string;
  salaryRange?: string;
  compensationRate?: string;
  jobBenefits?: string;
  industry?: string;
  companyName?: string;
  companyAddress?: string;
  supervisorName?: string;
  supervisorTitle?: string;
  supervisorEmail?: string;
  supervisorPhone?: string;
  attestatorName?: string;
  attestatorTitle?: string;
  attestatorContact?: string;
  comment?: string;
  /** Which claimed fields the employer corrected. */
  corrected?: ('title' | 'startDate' | 'endDate')[];
  via: 'respondent' | 'test_helper';
}

export interface EmploymentVerificationsTable {
  id: Generated<number>;
  org_id: string;
  mode: Mode;
  seq: number;
  reference: string;
  applicant: Json<EmploymentApplicant>;
  employer_name: string;
  employer_email: string;
  employer_phone: string;
  claimed_title: string;
  claimed_start_date: string;
  claimed_end_date: string | null;
  state: ColumnType<EmploymentState, EmploymentState | undefined, EmploymentState>;
  reason: string | null;
  attestation: ColumnType<EmploymentAttestation | null, string | null | undefined, string | null>;
  responded_at: Timestamp;
  price: ColumnType<number, number | undefined, number>;
  completed_at: Timestamp;
  cancelled_at: Timestamp;
  created_at: ColumnType<Date, Date | string | undefined, never>;
}

export type EmploymentRow = Selectable<EmploymentVerificationsTable>;

declare module '../platform/db/schema.js' {
  interface DB {
    employment_verifications: EmploymentVerificationsTable;
  }
}
