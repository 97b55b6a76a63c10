import type { ColumnType, Generated, Selectable } from 'kysely';
import type { Mode } from '../platform/db/schema.js';

type Json<T> = ColumnType<T, string, string>;
type Timestamp = ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;

export type GuarantorState = 'in_progress' | 'awaiting_address' | 'verified' | 'not_verified' | 'cancelled';
export type AddressOutcome = 'verified' | 'failed' | 'cancelled';
/** The record codes of the IDs a guarantor may give. */
export type GuarantorIdType = 'NIN' | 'BVN' | 'FRSC' | 'VIN';

export interface GuarantorApplicant {
  idType: string;
  idNumber: string;
  firstname: string;
  middlename: string;
  lastname: string;
  phone: string;
  gender: string;
  birthdate: string;
  photo: string;
}

export interface GuarantorAddress {
  street: string;
  city: string;
  lga: string;
  state: string;
  landmark: string;
  country: string;
}

/** What the guarantor answered; the ID number only masked. */
export interface GuarantorResponse {
  decision: 'accepted' | 'declined';
  idType?: GuarantorIdType;
  idNumber?: string;
  /** Whether the registry knew the ID, and how it compared with the guarantor. */
  found?: boolean;
  matches?: { firstname: boolean; lastname: boolean; dob: boolean };
  /** `respondent` (the page) or `test_helper`. */
  via: 'respondent' | 'test_helper';
}

export interface GuarantorVerificationsTable {
  id: Generated<number>;
  org_id: string;
  mode: Mode;
  seq: number;
  reference: string;
  applicant: Json<GuarantorApplicant>;
  firstname: string;
  lastname: string;
  phone: string;
  email: string;
  acceptable_id_types: Json<GuarantorIdType[]>;
  address: Json<GuarantorAddress>;
  verify_address: boolean;
  address_verification_id: number | null;
  address_outcome: AddressOutcome | null;
  state: ColumnType<GuarantorState, GuarantorState | undefined, GuarantorState>;
  reason: string | null;
  response: ColumnType<GuarantorResponse | null, string | null | undefined, string | null>;
  responded_at: Timestamp;
  price: ColumnType<number, number | undefined, number>;
  completed_at: Timestamp;
  cancelled_at: Timestamp;
  created_at: ColumnType<Date, Date | string | undefined, never>;
}

export type GuarantorRow = Selectable<GuarantorVerificationsTable>;

declare module '../platform/db/schema.js' {
  interface DB {
    guarantor_verifications: GuarantorVerificationsTable;
  }
}
