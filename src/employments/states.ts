import type { StateMachine, StatusTriple } from '../platform/state-machine.js';
import type { EmploymentState } from './tables.js';

/** Why an employment verification ended not verified: the record's `subStatus`. */
export const EMPLOYMENT_REASONS = {
  declined: 'EMPLOYER_DECLINED',
  notEmployee: 'EMPLOYEE_NOT_FOUND',
  mismatch: 'DATA_MISMATCH',
  noResponse: 'NO_RESPONSE',
} as const;

export type EmploymentReason = (typeof EMPLOYMENT_REASONS)[keyof typeof EMPLOYMENT_REASONS];

/** The employment verification's states (docs/states.md): the employer's answer completes it. */
export const EMPLOYMENT_STATES: StateMachine<EmploymentState> = {
  resource: 'employment',
  initial: 'in_progress',
  transitions: {
    in_progress: ['verified', 'not_verified', 'cancelled'],
    verified: [],
    not_verified: [],
    cancelled: [],
  },
  display(state, reason): StatusTriple {
    switch (state) {
      case 'in_progress':
        return { status: 'IN_PROGRESS', subStatus: 'IN_PROGRESS', state: 'IN_PROGRESS' };
      case 'verified':
        return { status: 'VERIFIED', subStatus: 'VERIFIED', state: 'COMPLETE' };
      case 'not_verified':
        return { status: 'NOT_VERIFIED', subStatus: reason ?? 'NOT_VERIFIED', state: 'COMPLETE' };
      case 'cancelled':
        return { status: 'CANCELLED', subStatus: 'CANCELLED', state: 'CANCELLED' };
    }
  },
};

export function employmentEventFor(state: EmploymentState): 'employment.completed' | 'employment.cancelled' | undefined {
  if (state === 'verified' || state === 'not_verified') return 'employment.completed';
  if (state === 'cancelled') return 'employment.cancelled';
  return undefined;
}
