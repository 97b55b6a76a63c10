import type { Transaction, Updateable } from 'kysely';
import { chargeUsage } from '../platform/billing.js';
import type { DB } from '../platform/db/schema.js';
import { assertTransition } from '../platform/state-machine.js';
import { enqueueEvent } from '../webhooks/events.js';
import { SESSION_BILLABLES } from './billing.js';
import { renderSession } from './render.js';
import { updateSession } from './repository.js';
import { SESSION_MACHINE, sessionEventFor, type SessionReason } from './states.js';
import type { SessionRow, SessionStatus, VerificationSessionsTable } from './tables.js';

export interface SessionChange {
  to: SessionStatus;
  reasons?: readonly SessionReason[];
  cancelledBy?: 'customer' | 'user' | 'erasure';
  /** Other columns written with the status (checks, identity, consent). */
  patch?: Updateable<VerificationSessionsTable>;
  now: Date;
}

/**
 * The one function that changes a session's status: checks the transition against
 * SESSION_MACHINE (409 when not allowed), writes the row, charges the session price once in live
 * mode, and queues its webhook (session.completed, session.expired), all in the caller's
 * transaction, so the charge, the webhook and the result commit together or not at all. `row`
 * must have been locked (FOR UPDATE) by that transaction.
 *
 * A session pays its price with its first ID lookup (src/sessions/payment.ts), before anything is
 * looked up. What is charged here is what was not paid that way: a session whose ID was found
 * before that rule (charged on completion, or on a cancellation or expiry after its ID was
 * found) and the test helper's completions (a usage row at no cost). A wallet that cannot pay
 * then does not change the outcome: its usage row says `insufficient_funds` with nothing
 * charged, the session is marked `unpaid`, and nothing of it that depends on the registry is
 * ever shown (`recordShown`, `shownChecks`).
 */
export async function applySessionTransition(trx: Transaction<DB>, row: SessionRow, change: SessionChange): Promise<SessionRow> {
  assertTransition(SESSION_MACHINE, row.status, change.to);
  const { now } = change;
  const completes = change.to === 'verified' || change.to === 'failed';
  const endsAfterLookup = (change.to === 'cancelled' || change.to === 'expired') && row.checks.idLookup?.passed === true;
  let billing: Updateable<VerificationSessionsTable> = {};
  // Paid already when its first ID lookup was (src/sessions/payment.ts); only a session whose ID
  // was found before sessions paid at their lookup (or a test helper's) is charged here.
  if ((completes || endsAfterLookup) && row.usage_id === null) {
    const usage = await chargeUsage(trx, { orgId: row.org_id, mode: row.mode, billable: SESSION_BILLABLES.session, subject: `reference ${row.reference}` });
    billing = { price: usage.price, usage_id: usage.usageId, unpaid: !usage.paid };
  }
  const updated = await updateSession(trx, Number(row.id), {
    ...change.patch,
    ...billing,
    status: change.to,
    ...(change.reasons ? { reasons: JSON.stringify(change.reasons) } : {}),
    ...(change.to === 'in_progress' ? { started_at: now } : {}),
    ...(completes ? { completed_at: now } : {}),
    ...(change.to === 'cancelled' ? { cancelled_at: now, cancelled_by: change.cancelledBy ?? 'customer' } : {}),
    ...(change.to === 'expired' ? { expired_at: now } : {}),
  });
  const type = sessionEventFor(change.to);
  if (type) {
    await enqueueEvent(trx, { orgId: row.org_id, mode: row.mode, type, data: renderSession(updated), resource: { kind: 'session', id: Number(row.id) } }, now);
  }
  return updated;
}
