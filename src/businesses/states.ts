import type { VisitStatus } from '../agents/visit.js';
import { displayVisitStatus } from '../addresses/states.js';
import type { StateMachine } from '../platform/state-machine.js';

/** Why a business could not be verified: the record's subStatus (docs/states.md). */
export const BUSINESS_FAILURE_REASONS = [
  'business not found',
  'business closed',
  'business relocated',
  'business name mismatch',
  'owner unknown at business',
  'address inaccessible',
] as const;

export const DEFAULT_BUSINESS_FAILURE = 'business not found';

/** The business verification lifecycle: the same shape as the address one, its own table. */
export const BUSINESS_MACHINE: StateMachine<VisitStatus> = {
  resource: 'business',
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
