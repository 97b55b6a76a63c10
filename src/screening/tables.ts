import type { ColumnType, Generated, Selectable } from 'kysely';
import type { Mode } from '../platform/db/schema.js';
import type { EntitySchema } from './entity.js';

type Json<T> = ColumnType<T, string, string>;
type Timestamp = ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;

/**
 * A screening's state (docs/screening.md): `clear` no hit; `pending_review` hits wait for a
 * review; `confirmed_match` a hit was reviewed a true match (final); `cleared` every hit was
 * reviewed a false positive.
 */
export type ScreeningState = 'clear' | 'pending_review' | 'confirmed_match' | 'cleared';

/** The subject as the customer sent it (checked), stored encrypted. */
export interface StoredSubject {
  type: 'person' | 'organization';
  /** The full name: `name`, or firstname middlename lastname joined. */
  name: string;
  firstname?: string;
  middlename?: string;
  lastname?: string;
  /** YYYY or YYYY-MM-DD. */
  dob?: string;
  gender?: 'male' | 'female';
  /** ISO 3166-1 alpha-2, upper case. */
  nationality?: string;
  aliases: string[];
}

export interface ScreenedList {
  source: string;
  version: number;
}

export interface ScreeningsTable {
  id: Generated<number>;
  org_id: string;
  mode: Mode;
  seq: number;
  reference: string;
  subject: Json<StoredSubject>;
  metadata: Json<Record<string, string>>;
  lists: Json<ScreenedList[]>;
  sources: string[] | null;
  threshold: number;
  state: ScreeningState;
  monitored: ColumnType<boolean, boolean | undefined, boolean>;
  monitoring_ended_at: Timestamp;
  monitoring_end_reason: ColumnType<string | null, string | null | undefined, string | null>;
  monitoring_paid_until: Timestamp;
  price: ColumnType<number, number | undefined, number>;
  consent_reference: ColumnType<string | null, string | null | undefined, string | null>;
  consent_obtained_at: Timestamp;
  consent_channel: ColumnType<string | null, string | null | undefined, string | null>;
  created_at: ColumnType<Date, Date | string | undefined, never>;
  updated_at: ColumnType<Date, Date | string | undefined, Date | string>;
}

/** The entity's fields as they were at the hit's list version. */
export interface EntitySnapshot {
  aliases: string[];
  topics: string[];
  birthDates: string[];
  nationalities: string[];
  programs: string[];
}

export interface HitReview {
  decision: 'true_match' | 'false_positive';
  note: string;
  /** Who reviewed: the portal user's email, or the operator. */
  by: string;
  /** ISO timestamp. */
  at: string;
}

export interface ScreeningHitsTable {
  id: Generated<number>;
  screening_id: number;
  source: string;
  entity_id: string;
  list_version: number;
  schema: EntitySchema;
  name: string;
  matched_name: string;
  score: number;
  entity: Json<EntitySnapshot>;
  explanation: string;
  decision: ColumnType<HitReview['decision'] | null, HitReview['decision'] | null | undefined, HitReview['decision'] | null>;
  review: ColumnType<HitReview | null, string | null | undefined, string | null>;
  reviewed_at: Timestamp;
  from_monitoring: ColumnType<boolean, boolean | undefined, boolean>;
  created_at: ColumnType<Date, Date | string | undefined, never>;
}

export type ScreeningRow = Selectable<ScreeningsTable>;
export type ScreeningHitRow = Selectable<ScreeningHitsTable>;

declare module '../platform/db/schema.js' {
  interface DB {
    screenings: ScreeningsTable;
    screening_hits: ScreeningHitsTable;
  }
}
