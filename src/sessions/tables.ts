import type { ColumnType, Generated, Selectable } from 'kysely';
import type { FrameProblem } from '../identities/biometrics/quality.js';
import type { Challenge, ChallengeOutcome, LivenessReason } from '../identities/liveness/engine.js';
import type { Mode } from '../platform/db/schema.js';

type Json<T> = ColumnType<T, string, string>;
type Timestamp = ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;

/** A session's lifecycle (states.ts): created → in_progress → verified | failed | expired | cancelled. */
export type SessionStatus = 'created' | 'in_progress' | 'verified' | 'failed' | 'expired' | 'cancelled';

/** The ID types an end user may give (the API's names). */
export const SESSION_ID_TYPES = ['BVN', 'NIN', 'VNIN', 'DRIVERS_LICENSE'] as const;
export type SessionIdType = (typeof SESSION_ID_TYPES)[number];

/** What the customer prefilled: matched against the record found, like a lookup's applicant. */
export interface SessionApplicant {
  firstname?: string;
  lastname?: string;
  dob?: string;
  idType?: SessionIdType;
  idNumber?: string;
}

/** The end user's consent on the page (NDPA): when, from which address, to which text. */
export interface UserConsent {
  acceptedAt: string;
  ip: string;
  textVersion: string;
}

export interface IdLookupCheck {
  passed: boolean;
  idType: SessionIdType | null;
  /** Lookups made (at most MAX_ID_ATTEMPTS). */
  attempts: number;
  /** The prefilled applicant against the record found; null when nothing was found. */
  fieldMatches: { firstname: boolean; lastname: boolean; dob: boolean } | null;
  reasons: string[];
}

export interface LivenessCheck {
  passed: boolean;
  attempts: number;
  /** The deciding attempt's scores; null when no attempt was decided by the engine (test helper, replays). */
  scores: { antispoof: number; live: number; consistency: number } | null;
  challenges: ChallengeOutcome[];
  reasons: string[];
  /** True when the sandbox's test helper decided it, not the engine. */
  simulated: boolean;
}

export interface FaceMatchCheck {
  passed: boolean;
  matchScore: number | null;
  matchingThreshold: number;
  maxScore: number;
  reasons: string[];
  simulated: boolean;
  /** `local`, or the upstream the organization's face matches were routed to (issue 50, part 6); absent on checks made before. */
  engine?: string;
}

/** The screening of the person the ID lookup found (checks.screening; src/screening). */
export interface ScreeningCheck {
  /** No watchlist entry scored at or above the threshold when the session screened. */
  passed: boolean;
  /** The screening's id (GET /v1/verifications/screenings/:id): its hits, their review, its monitoring. */
  screeningId: number;
  /** The screening's status when the session screened: CLEAR or PENDING_REVIEW. */
  status: string;
  hits: number;
  reasons: string[];
}

export interface SessionChecks {
  idLookup?: IdLookupCheck;
  liveness?: LivenessCheck;
  faceMatch?: FaceMatchCheck;
  screening?: ScreeningCheck;
}

export interface VerificationSessionsTable {
  id: Generated<number>;
  public_id: string;
  org_id: string;
  mode: Mode;
  seq: number;
  reference: string;
  status: ColumnType<SessionStatus, SessionStatus | undefined, SessionStatus>;
  reasons: ColumnType<string[], string | undefined, string>;
  cancelled_by: ColumnType<'customer' | 'user' | 'erasure' | null, 'customer' | 'user' | 'erasure' | null | undefined, 'customer' | 'user' | 'erasure' | null>;
  id_types: Json<SessionIdType[]>;
  applicant: Json<SessionApplicant>;
  metadata: Json<Record<string, string>>;
  check_liveness: boolean;
  check_face_match: boolean;
  check_screening: ColumnType<boolean, boolean | undefined, boolean>;
  redirect_url: string | null;
  consent_reference: ColumnType<string | null, string | null | undefined, string | null>;
  consent_obtained_at: Timestamp;
  consent_channel: ColumnType<string | null, string | null | undefined, string | null>;
  user_consent: ColumnType<UserConsent | null, string | null | undefined, string | null>;
  id_type: ColumnType<SessionIdType | null, SessionIdType | null | undefined, SessionIdType | null>;
  id_number: ColumnType<string | null, string | null | undefined, string | null>;
  identity: ColumnType<Record<string, unknown> | null, string | null | undefined, string | null>;
  id_attempts: ColumnType<number, number | undefined, number>;
  /** When the ID lookup in flight was reserved (one at a time); null when none is. */
  id_lookup_started_at: Timestamp;
  liveness_attempts: ColumnType<number, number | undefined, number>;
  checks: ColumnType<SessionChecks, string | undefined, string>;
  price: ColumnType<number, number | undefined, number>;
  usage_id: ColumnType<number | null, number | null | undefined, number | null>;
  /** Ended against a wallet that could not pay: the outcome stands, the record is not shown. */
  unpaid: ColumnType<boolean, boolean | undefined, boolean>;
  created_at: ColumnType<Date, Date | string | undefined, never>;
  expires_at: ColumnType<Date, Date | string, Date | string>;
  started_at: Timestamp;
  completed_at: Timestamp;
  cancelled_at: Timestamp;
  expired_at: Timestamp;
  anonymised_at: Timestamp;
}

export type SessionTokenKind = 'url' | 'client_secret' | 'handoff';

export interface SessionTokensTable {
  token_hash: string;
  session_id: number;
  kind: SessionTokenKind;
  created_at: ColumnType<Date, Date | string | undefined, never>;
}

export interface SessionHandoffsTable {
  code_hash: string;
  session_id: number;
  expires_at: ColumnType<Date, Date | string, Date | string>;
  created_at: ColumnType<Date, Date | string | undefined, never>;
}

export type AttemptStatus = 'open' | 'processing' | 'passed' | 'failed';

/** What an attempt's decision keeps: the engine's verdict without any image. */
export interface AttemptDecision {
  passed: boolean;
  reasons: (LivenessReason | 'LIVENESS_ATTEMPTS_EXHAUSTED')[];
  scores: { antispoof: number; live: number; consistency: number } | null;
  challenges: ChallengeOutcome[];
  frontalFrame: number | null;
  frames: number;
  cpuMs: number;
  /** POOR_QUALITY from the face match's quality gate: what was wrong with the frames (quality.ts), most frequent first. */
  quality?: FrameProblem[];
}

export interface SessionLivenessAttemptsTable {
  id: string;
  session_id: number;
  number: number;
  challenges: Json<Challenge[]>;
  status: ColumnType<AttemptStatus, AttemptStatus | undefined, AttemptStatus>;
  decision: ColumnType<AttemptDecision | null, string | null | undefined, string | null>;
  created_at: ColumnType<Date, Date | string | undefined, never>;
  expires_at: ColumnType<Date, Date | string, Date | string>;
  submitted_at: Timestamp;
  decided_at: Timestamp;
  /** The ID the attempt's face is compared with, written when its frames are claimed. */
  id_type: ColumnType<SessionIdType | null, SessionIdType | null | undefined, SessionIdType | null>;
  id_number: ColumnType<string | null, string | null | undefined, string | null>;
}

export interface SessionFramesTable {
  attempt_id: string;
  position: number;
  file_id: string | null;
  sha256: string;
  at_ms: number;
  created_at: ColumnType<Date, Date | string | undefined, never>;
}

export type SessionRow = Selectable<VerificationSessionsTable>;
export type AttemptRow = Selectable<SessionLivenessAttemptsTable>;

declare module '../platform/db/schema.js' {
  interface DB {
    verification_sessions: VerificationSessionsTable;
    session_tokens: SessionTokensTable;
    session_handoffs: SessionHandoffsTable;
    session_liveness_attempts: SessionLivenessAttemptsTable;
    session_frames: SessionFramesTable;
  }
}
