import type { Kysely, Transaction } from 'kysely';
import { addressKey } from '../../platform/client-address.js';
import { keyringOf } from '../../platform/crypto/fields.js';
import type { DB } from '../../platform/db/schema.js';
import { ApiError } from '../../platform/errors.js';
import { cannotPay } from '../payment.js';
import type { SessionRow } from '../tables.js';
import { sessionPriceIn, spentBy } from './spend.js';

/**
 * The ID steps of sessions started from a verification link (docs/sessions.md, "Verification
 * links" and "Limits"). Anyone with a link's URL starts sessions, and a link's session has no
 * applicant to compare with: its ID step tells whether a number exists, and the first try of each
 * session pays the owner's session price. These limits keep a public link from being an
 * identity-number oracle its owner pays for.
 *
 * - Per client address per link: LINK_ID_TRIES_PER_ADDRESS tries an hour. Two people behind one
 *   address (a household, an office, carrier NAT) who each need all three of a session's tries,
 *   or six who get their number right first time; one address learns at most six numbers an hour
 *   from one link, not one every few seconds.
 * - Per link: LINK_ID_TRIES_PER_LINK tries a minute, whatever the addresses. A branch poster or
 *   a campaign link at its busiest sees a person every few seconds; a crowd of addresses trying
 *   numbers at machine speed gets thirty a minute, at most thirty session prices, which the
 *   owner's spend cap bounds in all and which leaves time to turn the link off.
 * - The spend cap: a try that would pay the session's price is refused (402, the message of an
 *   empty wallet) when the link's sessions have paid so much that one more would pass the cap.
 *
 * Counted exactly across processes: every ID step of one link takes the link's row lock (FOR
 * UPDATE) in the transaction that reserves the lookup and charges the session, so the counts and
 * the sum of what the sessions paid are read after the previous step of the link has committed.
 * The limits hold in test mode too (its identities are public, but a test link behaves as the live
 * one will); the cap never binds there, where sessions cost nothing.
 */

export const LINK_ID_TRIES_PER_ADDRESS = 6;
export const LINK_ID_ADDRESS_WINDOW_MS = 60 * 60_000;
export const LINK_ID_TRIES_PER_LINK = 30;
export const LINK_ID_LINK_WINDOW_MS = 60_000;

export interface LinkIdStep {
  /** The client's address (`request.ip`): counted by addressKey, stored only as a blind index. */
  address: string;
  /** Whether this try pays the session's price (its first lookup): the spend cap is checked. */
  charging: boolean;
  now: Date;
}

/**
 * Admits one ID step of a session started from a link, inside the transaction that holds the
 * session's row and reserves its lookup, before the session is charged: 429 RATE_LIMITED (with
 * Retry-After) over a limit, 402 PAYMENT_REQUIRED when the charge would pass the link's spend cap.
 * Either rolls the whole reservation back: nothing is looked up or charged, no try is spent. An
 * admitted step is recorded (and rolled back with the transaction should the charge fail).
 */
export async function admitLinkIdStep(trx: Transaction<DB>, session: Pick<SessionRow, 'link_id' | 'mode'>, step: LinkIdStep): Promise<void> {
  if (session.link_id === null) return;
  const link = await trx.selectFrom('verification_links').select(['id', 'spend_limit']).where('id', '=', Number(session.link_id)).forUpdate().executeTakeFirst();
  if (!link) return;
  const linkId = Number(link.id);
  const key = keyringOf(trx).blindIndex('link-id-step', `${linkId}\0${addressKey(step.address)}`);
  const now = step.now.getTime();
  const triesSince = (windowMs: number, address?: string) => {
    let query = trx.selectFrom('link_id_steps').select('tried_at').where('link_id', '=', linkId).where('tried_at', '>', new Date(now - windowMs));
    if (address !== undefined) query = query.where('address_key', '=', address);
    return query.orderBy('tried_at').execute();
  };
  /** Seconds until enough of `tries` have left their window for one more to fit; undefined while one fits now. */
  const wait = (tries: { tried_at: Date }[], limit: number, windowMs: number) =>
    tries.length < limit ? undefined : Math.max(1, Math.ceil((tries[tries.length - limit]!.tried_at.getTime() + windowMs - now) / 1000));

  const fromAddress = wait(await triesSince(LINK_ID_ADDRESS_WINDOW_MS, key), LINK_ID_TRIES_PER_ADDRESS, LINK_ID_ADDRESS_WINDOW_MS);
  const fromLink = wait(await triesSince(LINK_ID_LINK_WINDOW_MS), LINK_ID_TRIES_PER_LINK, LINK_ID_LINK_WINDOW_MS);
  if (fromAddress !== undefined) {
    const minutes = Math.ceil(Math.max(fromAddress, fromLink ?? 0) / 60);
    throw new ApiError('RATE_LIMITED', `Too many ID checks from your network through this link; please try again in ${minutes} minute${minutes === 1 ? '' : 's'}`, {
      retryAfterSeconds: Math.max(fromAddress, fromLink ?? 0),
    });
  }
  if (fromLink !== undefined) {
    throw new ApiError('RATE_LIMITED', 'This verification link is taking too many ID checks at the moment; please try again in a minute', { retryAfterSeconds: fromLink });
  }

  if (step.charging && link.spend_limit !== null) {
    const price = await sessionPriceIn(trx, session.mode);
    const spent = (await spentBy(trx, [linkId])).get(linkId) ?? 0;
    if (price > 0 && spent + price > Number(link.spend_limit)) throw cannotPay();
  }
  await trx.insertInto('link_id_steps').values({ link_id: linkId, address_key: key, tried_at: step.now }).execute();
}

/**
 * Deletes the ID steps past the longest window (run by the session expiry task every minute):
 * they count against nothing any more, and even a blind index of an address is kept no longer
 * than it is needed. Answers how many were deleted.
 */
export async function forgetLinkIdSteps(db: Kysely<DB>, now: Date): Promise<number> {
  const deleted = await db.deleteFrom('link_id_steps').where('tried_at', '<=', new Date(now.getTime() - LINK_ID_ADDRESS_WINDOW_MS)).executeTakeFirst();
  return Number(deleted.numDeletedRows);
}
