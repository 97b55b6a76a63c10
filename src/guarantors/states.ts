import type { StateMachine, StatusTriple } from '../platform/state-machine.js';
import type { GuarantorState } from './tables.js';

/** Why a guarantor verification ended not verified: the record's `subStatus`. */
export const GUARANTOR_REASONS = {
  declined: 'GUARANTOR_DECLINED',
  idMismatch: 'ID_MISMATCH',
  idNotFound: 'ID_NOT_FOUND',
  addressNotVerified: 'ADDRESS_NOT_VERIFIED',
  noResponse: 'NO_RESPONSE',
} as const;

export type GuarantorReason = (typeof GUARANTOR_REASONS)[keyof typeof GUARANTOR_REASONS];

/**
 * The guarantor verification's states (docs/states.md). Created `in_progress`; the guarantor's
 * answer either decides the outcome or, when the guarantor's address is verified too and that
 * verification is still running, moves it to `awaiting_address`. Cancellable until it ends.
 */
export const GUARANTOR_STATES: StateMachine<GuarantorState> = {
  resource: 'guarantor',
  initial: 'in_progress',
  transitions: {
    in_progress: ['awaiting_address', 'verified', 'not_verified', 'cancelled'],
    awaiting_address: ['verified', 'not_verified', 'cancelled'],
    verified: [],
    not_verified: [],
    cancelled: [],
  },
  display(state, reason): StatusTriple {
    switch (state) {
      case 'in_progress':
        return { status: 'IN_PROGRESS', subStatus: 'IN_PROGRESS', state: 'IN_PROGRESS' };
      case 'awaiting_address':
        return { status: 'IN_PROGRESS', subStatus: 'AWAITING_ADDRESS_VERIFICATION', state: 'IN_PROGRESS' };
      case 'verified':
        return { status: 'VERIFIED', subStatus: 'VERIFIED', state: 'COMPLETE' };
      case 'not_verified':
        return { status: 'NOT_VERIFIED', subStatus: reason ?? 'NOT_VERIFIED', state: 'COMPLETE' };
      case 'cancelled':
        return { status: 'CANCELLED', subStatus: 'CANCELLED', state: 'CANCELLED' };
    }
  },
};

/** The webhook a transition into `state` sends, if any. */
export function guarantorEventFor(state: GuarantorState): 'guarantor.completed' | 'guarantor.cancelled' | undefined {
  if (state === 'verified' || state === 'not_verified') return 'guarantor.completed';
  if (state === 'cancelled') return 'guarantor.cancelled';
  return undefined;
}
