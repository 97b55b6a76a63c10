import type { StatusTriple } from '../platform/state-machine.js';
import type { HitReview, ScreeningState } from './tables.js';

/**
 * A screening's state follows from its hits (docs/screening.md, "Status"): any hit reviewed a true
 * match makes it `confirmed_match` (final: a confirmed match stays, whatever is found later);
 * otherwise any hit not reviewed yet makes it `pending_review`; otherwise hits all reviewed false
 * positives make it `cleared`; no hit at all is `clear`.
 */
export function stateOf(decisions: readonly (HitReview['decision'] | null)[]): ScreeningState {
  if (decisions.includes('true_match')) return 'confirmed_match';
  if (decisions.includes(null)) return 'pending_review';
  return decisions.length > 0 ? 'cleared' : 'clear';
}

/** The record's `{status, subStatus, state}`; `unreviewed`: hits not reviewed yet (a confirmed match can have new ones). */
export function displayStatus(state: ScreeningState, unreviewed: number): StatusTriple {
  switch (state) {
    case 'clear':
      return { status: 'CLEAR', subStatus: 'NO_MATCH', state: 'COMPLETE' };
    case 'pending_review':
      return { status: 'PENDING_REVIEW', subStatus: 'POSSIBLE_MATCH', state: 'IN_REVIEW' };
    case 'confirmed_match':
      return { status: 'CONFIRMED_MATCH', subStatus: unreviewed > 0 ? 'NEW_HITS_PENDING_REVIEW' : 'TRUE_MATCH', state: unreviewed > 0 ? 'IN_REVIEW' : 'COMPLETE' };
    case 'cleared':
      return { status: 'CLEARED', subStatus: 'FALSE_POSITIVE', state: 'COMPLETE' };
  }
}
