import type { ColumnType } from 'kysely';

/**
 * What address and business verifications share as field visits: lifecycle values, the stored
 * applicant, the neighbour, and the report an agent (or the sandbox test helper) files.
 */

/** `pending`: waiting for a visit; `visiting`: an agent has started the visit (no refund after this). */
export type VisitStatus = 'pending' | 'visiting' | 'verified' | 'not_verified' | 'cancelled';

export const OPEN_STATUSES: readonly VisitStatus[] = ['pending', 'visiting'];

export interface StoredApplicant {
  firstname?: string;
  lastname?: string;
  middlename?: string;
  phone?: string;
  email?: string;
  idType?: string;
  idNumber?: string;
  gender?: string;
  birthdate?: string;
  photo?: string;
}

export interface Neighbor {
  name: string;
  comment: string;
  phone: string;
}

/** What an agent found at a business; every field optional. */
export interface BusinessFindings {
  isBusinessKnown?: boolean;
  isBusinessOwnerKnown?: boolean;
  ownerVisitsFrequently?: boolean;
  isCorrectBusinessName?: boolean;
  businessNameFound?: string;
  businessArea?: string;
}

export interface VisitReport {
  outcome: 'verified' | 'failed';
  /** Why the place could not be verified (a failed outcome); one of the resource's reasons. */
  reason: string | undefined;
  latitude: number | undefined;
  longitude: number | undefined;
  photoIds: string[];
  neighbor: Neighbor;
  findings: BusinessFindings;
  /**
   * Why the operator must look at the report before it counts (GPS far from the place's state,
   * too few photos, filed late), set by the review check when an agent's report is filed
   * (src/agents/review.ts); undefined for a clean report. Reasons are joined with "; ".
   */
  reviewReason: string | undefined;
}

type Json<T> = ColumnType<T, string, string>;
type NullableJson<T> = ColumnType<T | null, string | null | undefined, string | null>;
type Timestamp = ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;

/** Columns both verification tables share (migration 0004). */
export interface FieldVisitColumns {
  id: ColumnType<number, never, never>;
  org_id: string;
  mode: 'test' | 'live';
  seq: number;
  reference: string;
  applicant: Json<StoredApplicant>;
  street: string;
  city: ColumnType<string, string | undefined, string>;
  landmark: ColumnType<string, string | undefined, string>;
  lga: string;
  state: string;
  country: ColumnType<string, string | undefined, string>;
  status: ColumnType<VisitStatus, VisitStatus | undefined, VisitStatus>;
  reason: ColumnType<string | null, string | null | undefined, string | null>;
  charged: ColumnType<number, number | undefined, number>;
  visit_started_at: Timestamp;
  latitude: ColumnType<number | null, number | null | undefined, number | null>;
  longitude: ColumnType<number | null, number | null | undefined, number | null>;
  photo_ids: ColumnType<string[], string[] | undefined, string[]>;
  neighbor: NullableJson<Neighbor>;
  flagged_for_review: ColumnType<boolean, boolean | undefined, boolean>;
  review_reason: ColumnType<string | null, string | null | undefined, string | null>;
  created_at: ColumnType<Date, Date | string | undefined, never>;
  completed_at: Timestamp;
  cancelled_at: Timestamp;
}
