import { sql, type Kysely } from 'kysely';
import { priceOf } from '../../platform/billing.js';
import type { DB, Mode } from '../../platform/db/schema.js';
import type { Problems } from '../../respondents/fields.js';
import { SESSION_BILLABLES } from '../billing.js';
import type { LinkRow } from './tables.js';

/**
 * A link's spend cap (docs/sessions.md, "Verification links"): the owner's limit, in kobo, on what
 * the link's sessions may cost in all, over the link's life. What they cost is the sum of their
 * `price`: a session's price is set when its first ID lookup pays, and back to 0 when no registry
 * answered and it was given back, so the sum is exact without a counter of its own.
 */

/** ₦1,000,000,000: far above any link's sessions, far below 2^53. */
export const MAX_SPEND_LIMIT = 100_000_000_000;

/** What a link's sessions have paid, and what one more costs now (0 in test mode). */
export interface LinkSpend {
  spent: number;
  price: number;
}

/** What one more session of the mode costs: the session price live, nothing in test mode. */
export function sessionPriceIn(db: Kysely<DB>, mode: Mode): Promise<number> {
  return mode === 'test' ? Promise.resolve(0) : priceOf(db, SESSION_BILLABLES.session);
}

/** What the sessions of each link have paid, in kobo (a link none of whose sessions paid is absent). */
export async function spentBy(db: Kysely<DB>, linkIds: number[]): Promise<Map<number, number>> {
  if (linkIds.length === 0) return new Map();
  const rows = await db
    .selectFrom('verification_sessions')
    .select(['link_id', sql<number>`sum(price)::bigint`.as('spent')])
    .where('link_id', 'in', linkIds)
    .where('price', '>', 0)
    .groupBy('link_id')
    .execute();
  return new Map(rows.map((row) => [Number(row.link_id), Number(row.spent)]));
}

/** The spend of each of the links (of one mode): one price, one grouped sum. */
export async function spendsOf(db: Kysely<DB>, mode: Mode, rows: Pick<LinkRow, 'id'>[]): Promise<(row: Pick<LinkRow, 'id'>) => LinkSpend> {
  const [price, spent] = await Promise.all([sessionPriceIn(db, mode), spentBy(db, rows.map((row) => Number(row.id)))]);
  return (row) => ({ spent: spent.get(Number(row.id)) ?? 0, price });
}

/** Whether the cap cannot pay one more session: the link is spent out. A free session never is. */
export function spentOut(row: Pick<LinkRow, 'spend_limit'>, spend: LinkSpend): boolean {
  return row.spend_limit !== null && spend.price > 0 && spend.spent + spend.price > row.spend_limit;
}

/** A spend cap of a body: undefined when absent, null to have none (an edit's `null`), or the kobo. */
export function checkSpendLimit(raw: number | null | undefined, problems: Problems): number | null | undefined {
  if (raw === undefined || raw === null) return raw;
  if (!Number.isInteger(raw) || raw < 1 || raw > MAX_SPEND_LIMIT) {
    problems.add(`spendLimit must be a whole number of kobo from 1 to ${MAX_SPEND_LIMIT.toLocaleString('en')} (₦${(MAX_SPEND_LIMIT / 100).toLocaleString('en')}), or null for no cap`);
    return undefined;
  }
  return raw;
}
