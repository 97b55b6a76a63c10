import type { ColumnType, Generated, Transaction } from 'kysely';
import { sql } from 'kysely';
import type { DB } from '../platform/db/schema.js';
import { ApiError } from '../platform/errors.js';

/** The window of VOUCH_MAIL_CAP_PER_HOUR. */
export const MAIL_CAP_WINDOW_MS = 60 * 60 * 1000;

export interface MailCapEntriesTable {
  id: Generated<number>;
  org_id: string;
  kind: string;
  created_at: ColumnType<Date, Date | string | undefined, never>;
}

declare module '../platform/db/schema.js' {
  interface DB {
    mail_cap_entries: MailCapEntriesTable;
  }
}

/**
 * Takes one of the organization's live mails to third parties (respondent requests, team
 * invitations) for the last hour, or refuses with 429 and Retry-After when `perHour` are already
 * taken. Call it first in the transaction that will queue the mail, before anything is charged
 * or stored: a refusal rolls the whole create back. Concurrent creates of one organization wait
 * for each other here (a transaction-scoped advisory lock), so the cap holds under a burst.
 */
export async function takeMailAllowance(trx: Transaction<DB>, orgId: string, kind: string, perHour: number, now: Date): Promise<void> {
  await sql`select pg_advisory_xact_lock(hashtextextended(${`vouch mail cap ${orgId}`}, 0))`.execute(trx);
  const windowStart = new Date(now.getTime() - MAIL_CAP_WINDOW_MS);
  await trx.deleteFrom('mail_cap_entries').where('org_id', '=', orgId).where('created_at', '<=', windowStart).execute();
  // The perHour-th newest mail of the window: while it is in the window, the cap is reached.
  const limiting = await trx
    .selectFrom('mail_cap_entries')
    .select('created_at')
    .where('org_id', '=', orgId)
    .orderBy('created_at', 'desc')
    .offset(perHour - 1)
    .limit(1)
    .executeTakeFirst();
  if (limiting) {
    const seconds = Math.max(1, Math.ceil((limiting.created_at.getTime() + MAIL_CAP_WINDOW_MS - now.getTime()) / 1000));
    throw new ApiError(
      'RATE_LIMITED',
      `This organization has reached its limit of ${perHour} emails an hour to people outside it (guarantors, employers, invitations) in live mode; nothing was created or charged. Retry in ${seconds} s.`,
      { retryAfterSeconds: seconds },
    );
  }
  await trx.insertInto('mail_cap_entries').values({ org_id: orgId, kind, created_at: now }).execute();
}
