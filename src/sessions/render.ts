import type { StatusTriple } from '../platform/state-machine.js';
import { SESSION_MACHINE } from './states.js';
import type { SessionApplicant, SessionChecks, SessionIdType, SessionRow, UserConsent } from './tables.js';

/** The Session record (DESIGN "Verification sessions"), as GET returns it and webhooks carry it. */
export interface SessionRecord {
  id: string;
  reference: string;
  /** Only in the create answer: the link is stored hashed. */
  url: string | null;
  /** Only in the create answer. */
  clientSecret: string | null;
  status: StatusTriple;
  idTypes: SessionIdType[];
  applicant: SessionApplicant;
  requestedChecks: { idLookup: true; liveness: boolean; faceMatch: boolean; screening: boolean };
  idType: SessionIdType | null;
  identity: Record<string, unknown> | null;
  checks: {
    idLookup: NonNullable<SessionChecks['idLookup']> | null;
    liveness: NonNullable<SessionChecks['liveness']> | null;
    faceMatch: (NonNullable<SessionChecks['faceMatch']> & { engine: string }) | null;
    screening: NonNullable<SessionChecks['screening']> | null;
  };
  reasons: string[];
  userConsent: UserConsent | null;
  redirectUrl: string | null;
  metadata: Record<string, string>;
  createdAt: string;
  startedAt: string | null;
  completedAt: string | null;
  expiresAt: string;
  endedAt: string | null;
}

const iso = (date: Date | null) => (date ? date.toISOString() : null);

/** Where an open session waits, for its `status.subStatus`. */
export function waitingStep(row: Pick<SessionRow, 'user_consent' | 'id_type' | 'checks'>): 'AWAITING_CONSENT' | 'AWAITING_ID' | 'AWAITING_LIVENESS' {
  if (!row.user_consent) return 'AWAITING_CONSENT';
  if (!row.checks.idLookup?.passed) return 'AWAITING_ID';
  return 'AWAITING_LIVENESS';
}

export function subStatusOf(row: SessionRow): string | null {
  if (row.status === 'in_progress') return waitingStep(row);
  if (row.status === 'cancelled') return row.cancelled_by === 'user' ? 'CANCELLED_BY_USER' : row.cancelled_by === 'erasure' ? 'SUBJECT_ERASED' : 'CANCELLED_BY_CUSTOMER';
  return shownReasons(row)[0] ?? (row.unpaid ? 'UNPAID' : null);
}

/** Reasons that come from the registry's answer: whether the number exists, matches, has a photo like the face. */
const REGISTRY_REASONS: ReadonlySet<string> = new Set(['ID_NOT_FOUND', 'ID_DETAILS_MISMATCH', 'ID_ATTEMPTS_EXHAUSTED', 'NO_REGISTRY_PHOTO', 'FACE_MISMATCH']);

/**
 * The session's reasons as they may be shown: a session that ended unpaid shows none that the
 * registry's answer decided (its subStatus is then `UNPAID`), or it would be a free lookup.
 */
export function shownReasons(row: Pick<SessionRow, 'reasons' | 'unpaid'>): string[] {
  return row.unpaid ? row.reasons.filter((code) => !REGISTRY_REASONS.has(code)) : row.reasons;
}

/**
 * Whether the registry's record may be shown: once the session's price is paid (its usage row
 * written: with its first ID lookup, src/sessions/payment.ts; test mode pays nothing and is paid).
 * A session that ended against an emptied wallet (`unpaid`, only possible for one whose ID was
 * found before sessions paid at their lookup) never shows it.
 */
export function recordShown(row: Pick<SessionRow, 'usage_id' | 'unpaid'>): boolean {
  return row.usage_id !== null && !row.unpaid;
}

/**
 * The checks as they may be shown. Until the record may be (`recordShown`), the ID check says
 * whether it passed and how many tries it took, not how the prefilled fields compared nor why a
 * try failed: "found but not matching" would tell that the number exists.
 */
export function shownChecks(row: Pick<SessionRow, 'checks' | 'usage_id' | 'unpaid'>): SessionRecord['checks'] {
  const { idLookup, liveness, faceMatch, screening } = row.checks;
  const shown = recordShown(row);
  return {
    idLookup: idLookup ? (shown ? idLookup : { ...idLookup, fieldMatches: null, reasons: [] }) : null,
    liveness: liveness ?? null,
    // The face match compared the registry's photo: an unpaid session never shows how.
    // Checks made before the engine was recorded were all the local model's.
    faceMatch: row.unpaid || !faceMatch ? null : { engine: 'local', ...faceMatch },
    screening: screening ?? null,
  };
}

export function renderSession(row: SessionRow, secrets?: { url: string; clientSecret: string }): SessionRecord {
  return {
    id: row.public_id,
    reference: row.reference,
    url: secrets?.url ?? null,
    clientSecret: secrets?.clientSecret ?? null,
    status: SESSION_MACHINE.display(row.status, subStatusOf(row)),
    idTypes: row.id_types,
    applicant: row.applicant,
    requestedChecks: { idLookup: true, liveness: row.check_liveness, faceMatch: row.check_face_match, screening: row.check_screening },
    idType: row.id_type,
    identity: recordShown(row) ? row.identity : null,
    checks: shownChecks(row),
    reasons: shownReasons(row),
    userConsent: row.user_consent,
    redirectUrl: row.redirect_url,
    metadata: row.metadata,
    createdAt: row.created_at.toISOString(),
    startedAt: iso(row.started_at),
    completedAt: iso(row.completed_at),
    expiresAt: row.expires_at.toISOString(),
    endedAt: iso(row.completed_at ?? row.cancelled_at ?? row.expired_at),
  };
}
