import type { Transaction, Updateable } from 'kysely';
import { parseDate } from '../identities/matching.js';
import type { DB } from '../platform/db/schema.js';
import { assertTransition } from '../platform/state-machine.js';
import { enqueueEvent } from '../webhooks/events.js';
import { renderEmployment } from './render.js';
import { updateEmployment } from './repository.js';
import { EMPLOYMENT_REASONS, EMPLOYMENT_STATES, employmentEventFor, type EmploymentReason } from './states.js';
import type { EmploymentAttestation, EmploymentRow, EmploymentState, EmploymentVerificationsTable } from './tables.js';

export interface EmploymentChange {
  to: EmploymentState;
  reason?: EmploymentReason | undefined;
  patch?: Updateable<EmploymentVerificationsTable>;
  now: Date;
}

/**
 * The one function that changes an employment verification's state: checks the transition
 * against EMPLOYMENT_STATES (409 when not allowed), writes the row and queues the webhook of a
 * completion or cancellation in the same transaction. `row` must be locked by the caller.
 */
export async function applyEmploymentTransition(trx: Transaction<DB>, row: EmploymentRow, change: EmploymentChange): Promise<EmploymentRow> {
  assertTransition(EMPLOYMENT_STATES, row.state, change.to);
  const ends = change.to === 'verified' || change.to === 'not_verified';
  const updated = await updateEmployment(trx, { orgId: row.org_id, mode: row.mode }, Number(row.id), {
    ...change.patch,
    state: change.to,
    reason: change.to === 'not_verified' ? (change.reason ?? null) : null,
    ...(ends ? { completed_at: change.now } : {}),
    ...(change.to === 'cancelled' ? { cancelled_at: change.now } : {}),
  });
  const type = employmentEventFor(change.to);
  if (type) await enqueueEvent(trx, { orgId: row.org_id, mode: row.mode, type, data: renderEmployment(updated) }, change.now);
  return updated;
}

/** Titles compare without case, punctuation or extra spaces: "Snr. Engineer" = "snr engineer". */
function sameTitle(a: string, b: string): boolean {
  const key = (value: string) => value.toLowerCase().replace(/[^\p{L}\p{N}]+/gu, ' ').trim();
  return key(a) === key(b);
}

/** Employment dates are compared to the month: HR records and memories rarely agree on the day. */
function sameMonth(a: string | null | undefined, b: string | null | undefined): boolean {
  if (!a || !b) return !a && !b;
  const left = parseDate(a);
  const right = parseDate(b);
  return !!left && !!right && left.year === right.year && left.month === right.month;
}

/** The claimed fields the employer's answer contradicts. */
export function correctionsOf(row: EmploymentRow, attestation: EmploymentAttestation): ('title' | 'startDate' | 'endDate')[] {
  const out: ('title' | 'startDate' | 'endDate')[] = [];
  if (attestation.title !== undefined && !sameTitle(attestation.title, row.claimed_title)) out.push('title');
  if (attestation.startDate !== undefined && !sameMonth(attestation.startDate, row.claimed_start_date)) out.push('startDate');
  if (attestation.endDate !== undefined && !sameMonth(attestation.endDate, row.claimed_end_date)) out.push('endDate');
  return out;
}

/**
 * The outcome of the employer's answer: a refusal or "never worked here" is not verified; a
 * confirmation is verified when title and dates agree with the claim, else DATA_MISMATCH.
 */
export function outcomeOf(attestation: EmploymentAttestation): { to: EmploymentState; reason?: EmploymentReason } {
  if (attestation.decision === 'declined') return { to: 'not_verified', reason: EMPLOYMENT_REASONS.declined };
  if (attestation.decision === 'not_employee') return { to: 'not_verified', reason: EMPLOYMENT_REASONS.notEmployee };
  if ((attestation.corrected ?? []).length > 0) return { to: 'not_verified', reason: EMPLOYMENT_REASONS.mismatch };
  return { to: 'verified' };
}
