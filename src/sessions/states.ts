import { LIVENESS_REASONS } from '../identities/liveness/engine.js';
import type { StateMachine, StatusTriple } from '../platform/state-machine.js';
import type { SessionStatus } from './tables.js';

/** Closed reason codes of a session's checks (docs/sessions.md, "Reason codes"). */
export const ID_LOOKUP_REASONS = ['ID_NOT_FOUND', 'ID_DETAILS_MISMATCH', 'ID_TYPE_NOT_ALLOWED', 'ID_ATTEMPTS_EXHAUSTED'] as const;
export const SESSION_LIVENESS_REASONS = [...LIVENESS_REASONS, 'LIVENESS_ATTEMPTS_EXHAUSTED'] as const;
export const FACE_MATCH_REASONS = ['NO_REGISTRY_PHOTO', 'FACE_MISMATCH'] as const;
export const SESSION_END_REASONS = ['EXPIRED', 'CANCELLED'] as const;

export type IdLookupReason = (typeof ID_LOOKUP_REASONS)[number];
export type FaceMatchReason = (typeof FACE_MATCH_REASONS)[number];

/** Every code a session may carry, for the test helper's `reason` and the documentation. */
export const SESSION_REASONS = [...ID_LOOKUP_REASONS, ...SESSION_LIVENESS_REASONS, ...FACE_MATCH_REASONS, ...SESSION_END_REASONS] as const;
export type SessionReason = (typeof SESSION_REASONS)[number];

export const OPEN_STATUSES: readonly SessionStatus[] = ['created', 'in_progress'];
export const isOpen = (status: SessionStatus) => OPEN_STATUSES.includes(status);

/**
 * The session lifecycle. `created` until the end user accepts the consent, `in_progress` while the
 * steps run; it ends `verified` or `failed` (completed), `expired` (the end user never finished in
 * time) or `cancelled` (by the customer's DELETE or the end user). A live session has paid its
 * price with its first ID lookup, whichever way it ends (payment.ts, transition.ts).
 * `subStatus` says where an open session waits, or why it ended.
 */
export const SESSION_MACHINE: StateMachine<SessionStatus> = {
  resource: 'session',
  initial: 'created',
  transitions: {
    created: ['in_progress', 'verified', 'failed', 'expired', 'cancelled'],
    in_progress: ['verified', 'failed', 'expired', 'cancelled'],
    verified: [],
    failed: [],
    expired: [],
    cancelled: [],
  },
  display(status, reason): StatusTriple {
    switch (status) {
      case 'created':
        return { status: 'CREATED', subStatus: 'AWAITING_USER', state: 'CREATED' };
      case 'in_progress':
        return { status: 'IN_PROGRESS', subStatus: reason ?? 'IN_PROGRESS', state: 'IN_PROGRESS' };
      case 'verified':
        return { status: 'VERIFIED', subStatus: 'VERIFIED', state: 'COMPLETED' };
      case 'failed':
        return { status: 'NOT_VERIFIED', subStatus: reason ?? 'NOT_VERIFIED', state: 'FAILED' };
      case 'expired':
        return { status: 'EXPIRED', subStatus: 'EXPIRED', state: 'EXPIRED' };
      case 'cancelled':
        return { status: 'CANCELLED', subStatus: reason ?? 'CANCELLED', state: 'CANCELLED' };
    }
  },
};

/** The webhook a transition into `status` sends: completions and expiries only (docs/sessions.md). */
export function sessionEventFor(status: SessionStatus): 'session.completed' | 'session.expired' | undefined {
  if (status === 'verified' || status === 'failed') return 'session.completed';
  if (status === 'expired') return 'session.expired';
  return undefined;
}
