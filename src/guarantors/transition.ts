import type { Transaction, Updateable } from 'kysely';
import type { DB } from '../platform/db/schema.js';
import { assertTransition } from '../platform/state-machine.js';
import { enqueueEvent } from '../webhooks/events.js';
import { renderGuarantor } from './render.js';
import { updateGuarantor } from './repository.js';
import { GUARANTOR_REASONS, GUARANTOR_STATES, guarantorEventFor, type GuarantorReason } from './states.js';
import type { AddressOutcome, GuarantorResponse, GuarantorRow, GuarantorState, GuarantorVerificationsTable } from './tables.js';

export interface GuarantorChange {
  to: GuarantorState;
  reason?: GuarantorReason | undefined;
  /** Other columns written with the state (the response, the address outcome). */
  patch?: Updateable<GuarantorVerificationsTable>;
  now: Date;
}

/**
 * The one function that changes a guarantor verification's state: checks the transition
 * against GUARANTOR_STATES (409 when not allowed), writes the row, and queues the webhook of a
 * completion or cancellation in the same transaction. `row` must have been locked (FOR UPDATE)
 * by the caller's transaction.
 */
export async function applyGuarantorTransition(trx: Transaction<DB>, row: GuarantorRow, change: GuarantorChange): Promise<GuarantorRow> {
  assertTransition(GUARANTOR_STATES, row.state, change.to);
  const ends = change.to === 'verified' || change.to === 'not_verified';
  const updated = await updateGuarantor(trx, { orgId: row.org_id, mode: row.mode }, Number(row.id), {
    ...change.patch,
    state: change.to,
    reason: change.to === 'not_verified' ? (change.reason ?? null) : null,
    ...(ends ? { completed_at: change.now } : {}),
    ...(change.to === 'cancelled' ? { cancelled_at: change.now } : {}),
  });
  const type = guarantorEventFor(change.to);
  if (type) await enqueueEvent(trx, { orgId: row.org_id, mode: row.mode, type, data: renderGuarantor(updated) }, change.now);
  return updated;
}

/**
 * Where a guarantor verification goes once the guarantor has answered: a refusal, an ID the
 * registry does not know or one that does not match decide it at once; an accepted, matching
 * answer is the outcome unless the guarantor's address is verified too, whose outcome then
 * decides (or is awaited).
 */
export function outcomeOf(
  response: GuarantorResponse,
  verifyAddress: boolean,
  addressOutcome: AddressOutcome | null,
): { to: GuarantorState; reason?: GuarantorReason } {
  if (response.decision === 'declined') return { to: 'not_verified', reason: GUARANTOR_REASONS.declined };
  if (response.found === false) return { to: 'not_verified', reason: GUARANTOR_REASONS.idNotFound };
  const matches = response.matches;
  if (matches && !(matches.firstname && matches.lastname && matches.dob)) return { to: 'not_verified', reason: GUARANTOR_REASONS.idMismatch };
  return outcomeAfterAddress(verifyAddress, addressOutcome);
}

/** The outcome of a guarantor who accepted with a matching ID, given the address verification's. */
export function outcomeAfterAddress(verifyAddress: boolean, addressOutcome: AddressOutcome | null): { to: GuarantorState; reason?: GuarantorReason } {
  if (!verifyAddress || addressOutcome === 'verified') return { to: 'verified' };
  if (addressOutcome === null) return { to: 'awaiting_address' };
  return { to: 'not_verified', reason: GUARANTOR_REASONS.addressNotVerified };
}
