import { ApiError } from './errors.js';

/** The `status` object of workflow records (spec: States and transitions). */
export interface StatusTriple {
  status: string;
  subStatus: string;
  state: string;
}

/**
 * A workflow resource's states as data: which transitions are allowed, and how each state is
 * shown in the record's `status` object. `display` may depend on a reason (e.g. the sub-status
 * of a failed verification).
 */
export interface StateMachine<S extends string> {
  resource: string;
  initial: S;
  transitions: Readonly<Record<S, readonly S[]>>;
  display(state: S, reason?: string | null): StatusTriple;
}

export function canTransition<S extends string>(machine: StateMachine<S>, from: S, to: S): boolean {
  return machine.transitions[from].includes(to);
}

/** Throws 409 style A (CONFLICT) when the transition is not allowed, naming both states. */
export function assertTransition<S extends string>(machine: StateMachine<S>, from: S, to: S): void {
  if (!canTransition(machine, from, to)) {
    throw new ApiError('CONFLICT', `This ${machine.resource} verification is ${from.replace(/_/g, ' ')} and cannot become ${to.replace(/_/g, ' ')}`);
  }
}
