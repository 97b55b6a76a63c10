import type { Kysely, Transaction } from 'kysely';
import { chargeUsage, refund } from '../platform/billing.js';
import type { DB } from '../platform/db/schema.js';
import { ApiError } from '../platform/errors.js';
import { SESSION_BILLABLES } from './billing.js';
import type { SessionRow } from './tables.js';

/**
 * A session pays before it looks (docs/sessions.md, "Charging"): its price is charged with its
 * first ID lookup, in the transaction that reserves that lookup, and a live session does nothing
 * more once its organization's live access is turned off. Both answers read the same to the end
 * user, who cannot act on either: the page asks them to try later or contact the organization.
 */

const CANNOT_GO_ON = 'The organization that asked for this verification cannot take it further just now. Please try again later, or contact them.';

export const cannotPay = () => new ApiError('PAYMENT_REQUIRED', CANNOT_GO_ON);
export const liveAccessOff = () => new ApiError('FORBIDDEN', CANNOT_GO_ON);

/** Whether the organization may still use live access (the operator's switch, `organizations.enabled`). */
export async function liveAccessOn(db: Kysely<DB>, orgId: string): Promise<boolean> {
  const org = await db.selectFrom('organizations').select('enabled').where('id', '=', orgId).executeTakeFirst();
  return org?.enabled === true;
}

/** Refuses every step of a live session whose organization's live access is off (403); test sessions go on. */
export async function assertMayProceed(db: Kysely<DB>, session: Pick<SessionRow, 'mode' | 'org_id'>): Promise<void> {
  if (session.mode === 'live' && !(await liveAccessOn(db, session.org_id))) throw liveAccessOff();
}

/**
 * Charges the session's price inside the caller's transaction, which holds the session's row lock
 * (the wallet's is taken by the charge's own UPDATE), and answers the columns that record it. A
 * wallet that cannot pay throws 402, rolling the transaction back: no try is spent, nothing is
 * looked up, nothing is recorded. Test mode records its usage row at no cost.
 */
export async function paySession(trx: Transaction<DB>, session: SessionRow): Promise<{ usage_id: number; price: number; unpaid: false }> {
  await assertMayProceed(trx, session);
  const usage = await chargeUsage(trx, { orgId: session.org_id, mode: session.mode, billable: SESSION_BILLABLES.session, subject: `reference ${session.reference}` });
  if (!usage.paid) throw cannotPay();
  return { usage_id: usage.usageId, price: usage.price, unpaid: false };
}

/** Gives the session's price back (no registry answered the lookup that paid it), with its ledger row; its usage row says `refunded`. */
export async function refundSession(trx: Transaction<DB>, session: SessionRow): Promise<void> {
  if (session.usage_id === null) return;
  if (session.price > 0) await refund(trx, session.org_id, Number(session.price), `session reference ${session.reference}: no registry answered its ID lookup`);
  await trx.updateTable('usage_events').set({ outcome: 'refunded', price: 0 }).where('id', '=', session.usage_id).execute();
}
