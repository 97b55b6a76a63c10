import { sql, type Kysely, type SelectQueryBuilder } from 'kysely';
import type { DB } from '../../platform/db/schema.js';

/**
 * Filtered lists count their matches up to this many and then say "more": an exact count of
 * 100,000 rows costs tens of milliseconds on every page, a bounded one a few (docs/portal-verifications.md).
 */
export const COUNT_CAP = 10_000;
/** How deep a filtered list pages: its count stops at COUNT_CAP, and an offset costs its length in index entries. */
export const MAX_FILTERED_OFFSET = COUNT_CAP;

export interface CappedTotal {
  total: number;
  totalCapped: boolean;
}

/** How many rows `query` (of any table: only its FROM and WHERE are used) selects, counting no further than COUNT_CAP + 1. */
export async function cappedCount(db: Kysely<DB>, query: SelectQueryBuilder<any, any, unknown>): Promise<CappedTotal> {
  const row = await db
    .selectFrom(query.clearSelect().select(sql<number>`1`.as('one')).clearOrderBy().limit(COUNT_CAP + 1).as('capped'))
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .executeTakeFirstOrThrow();
  const n = Number(row.n);
  return { total: Math.min(n, COUNT_CAP), totalCapped: n > COUNT_CAP };
}
