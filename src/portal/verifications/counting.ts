import { sql, type Kysely, type RawBuilder, type SelectQueryBuilder } from 'kysely';
import { accessLogOfPage, type PageViewer } from '../../access-log/service.js';
import type { DB } from '../../platform/db/schema.js';
import type { Scope } from '../../platform/pagination.js';

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

/**
 * A page of a filtered list and its count up to COUNT_CAP + 1, in one statement (one round trip
 * instead of two). `page` is `filtered` with its columns (an `id` among them), order, limit and
 * offset; `order` is that order again over the CTE `page` (`order by page.created_at desc, ...`).
 * With `logged`, the page's rows are also written to the access log by the same statement.
 */
export async function pageWithCappedCount<Row extends { id: unknown }>(
  db: Kysely<DB>,
  filtered: SelectQueryBuilder<any, any, unknown>,
  page: SelectQueryBuilder<any, any, Row>,
  order: RawBuilder<unknown>,
  logged?: { scope: Scope; viewer: PageViewer },
): Promise<CappedTotal & { rows: Row[] }> {
  const capped = filtered.clearSelect().select(sql<number>`1`.as('one')).clearOrderBy().limit(COUNT_CAP + 1);
  const log = logged ? sql`, ${accessLogOfPage(logged.scope, logged.viewer, 'id', order)}` : sql``;
  const { rows } = await sql<Row & { capped_count: string | number }>`
    with page as ${page}, counted as (select count(*) as capped_count from ${capped} capped_rows)${log}
    select counted.capped_count, page.* from counted left join page on true ${order}`.execute(db);
  const n = Number(rows[0]?.capped_count ?? 0);
  // An empty page still gives the count's one row, with no page columns.
  return { rows: rows.filter((row) => row.id !== null && row.id !== undefined), total: Math.min(n, COUNT_CAP), totalCapped: n > COUNT_CAP };
}
