import type { VisitStatus } from '../agents/visit.js';
import type { StateMachine, StatusTriple } from '../platform/state-machine.js';

/** Why an address could not be verified: the record's subStatus (docs/states.md). */
export const ADDRESS_FAILURE_REASONS = [
  'address not found',
  'applicant unknown at address',
  'applicant moved out',
  'address inaccessible',
  'incomplete address',
] as const;

export const DEFAULT_ADDRESS_FAILURE = 'address not found';

/**
 * The address verification lifecycle. `pending` and `visiting` both show In Progress; the
 * difference decides the refund on cancellation (an agent has been sent to the place).
 */
export const ADDRESS_MACHINE: StateMachine<VisitStatus> = {
  resource: 'address',
  initial: 'pending',
  transitions: {
    pending: ['visiting', 'verified', 'not_verified', 'cancelled'],
    visiting: ['verified', 'not_verified', 'cancelled'],
    verified: [],
    not_verified: [],
    cancelled: [],
  },
  display: displayVisitStatus,
};

/** The `status` object of address and business records. */
export function displayVisitStatus(status: VisitStatus, reason?: string | null): StatusTriple {
  switch (status) {
    case 'pending':
    case 'visiting':
      return { status: 'In Progress', subStatus: 'In Progress', state: 'In Progress' };
    case 'verified':
      return { status: 'Verified', subStatus: 'verified', state: 'complete' };
    case 'not_verified':
      return { status: 'Not Verified', subStatus: reason ?? 'not verified', state: 'complete' };
    case 'cancelled':
      return { status: 'Cancelled', subStatus: 'cancelled', state: 'cancelled' };
  }
}
