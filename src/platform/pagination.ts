import { CompiledQuery, sql, type Kysely, type Transaction } from 'kysely';
import { Type } from 'typebox';
import { accessLogOfPage, accessLogOfPageParameters, type PageViewer } from '../access-log/service.js';
import type { DB, Mode } from './db/schema.js';
import { ApiError } from './errors.js';

export const DEFAULT_LIMIT = 20;
export const MAX_LIMIT = 100;

/** The list query of every workflow list endpoint, for the OpenAPI document. Values are checked by `parsePage`. */
export const PageQuery = Type.Object({
  limit: Type.Optional(Type.String({ description: `Records per page, 1 to ${MAX_LIMIT} (default ${DEFAULT_LIMIT})` })),
  offset: Type.Optional(Type.String({ description: 'Records to skip, newest first (default 0)' })),
});

export interface Page {
  limit: number;
  offset: number;
}

function parseCount(name: string, raw: string | undefined, fallback: number, min: number, max: number): number {
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw)) throw new ApiError('VALIDATION_ERROR', `${name} must be a whole number`);
  const value = Number(raw);
  if (value < min || value > max) throw new ApiError('VALIDATION_ERROR', `${name} must be between ${min} and ${max}`);
  return value;
}

/** Parses `limit` and `offset`: bad values are 400, never silently clamped. */
export function parsePage(query: { limit?: string | undefined; offset?: string | undefined }): Page {
  return {
    limit: parseCount('limit', query.limit, DEFAULT_LIMIT, 1, MAX_LIMIT),
    offset: parseCount('offset', query.offset, 0, 0, Number.MAX_SAFE_INTEGER),
  };
}

export interface Scope {
  orgId: string;
  mode: Mode;
}

/**
 * The next sequence number of `kind` in the scope. Call it inside the transaction that inserts
 * the row: the counter row's lock orders concurrent creates, and a rollback gives the number back.
 */
export async function nextSequence(trx: Transaction<DB>, scope: Scope, kind: string): Promise<number> {
  const { rows } = await sql<{ value: number }>`
    insert into sequences (org_id, mode, kind, value) values (${scope.orgId}, ${scope.mode}, ${kind}, 1)
    on conflict (org_id, mode, kind) do update set value = sequences.value + 1
    returning value`.execute(trx);
  return rows[0]!.value;
}

/** A table whose rows carry a dense per-scope `seq` (1..N, from `nextSequence(kind)`), listed newest first. */
export interface SequencedTable<Row> {
  table: keyof DB & string;
  /** The `sequences.kind` that numbers the rows and holds their count. */
  kind: string;
  /** The columns a page selects; every column when absent. */
  columns?: readonly (keyof Row & string)[];
}

/**
 * One page of a sequenced table, newest first, with the exact total, in one statement: the
 * scope's counter gives the total and the page is the `seq` range below it, so the cost is an
 * index range scan whatever the offset. A scope with no counter has no rows (total 0).
 *
 * With a `viewer`, the same statement writes the page's rows to the personal data access log
 * (src/access-log): the list shows personal data, and its log rows commit with the read, before
 * the answer, without a second round trip.
 *
 * The statement's text depends only on its shape (table, columns, whether it logs), so it is
 * compiled once per shape and each page sends only its parameters: lists are the most frequent
 * reads, and building and compiling the query was a measurable part of each (docs/benchmarks.md).
 */
export async function pageBySequence<Row>(
  db: Kysely<DB>,
  source: SequencedTable<Row>,
  scope: Scope,
  page: Page,
  viewer?: PageViewer,
): Promise<{ rows: Row[]; total: number }> {
  const parameters = pageParameters(source, scope, page, viewer);
  const shape = `${db.getExecutor().adapter.constructor.name}|${source.table}|${source.columns?.join(',') ?? '*'}|${viewer ? 'logged' : ''}`;
  let text = compiledPages.get(shape);
  if (text === undefined) {
    const compiled = pageQuery(source, scope, page, viewer).compile(db);
    // The parameters are sent by position: the hand-kept list must be the one the query makes.
    if (compiled.parameters.length !== parameters.length || compiled.parameters.some((value, i) => value !== parameters[i])) {
      throw new Error(`pageBySequence: the parameters of ${shape} do not match its statement`);
    }
    text = compiled.sql;
    compiledPages.set(shape, text);
  }
  const { rows } = await db.executeQuery<Row & { page_total: number; page_seq: number | null }>(CompiledQuery.raw(text, parameters));
  const total = rows.length === 0 ? 0 : Number(rows[0]!.page_total);
  // Past the end, the left join still gives the counter's one row, with no page columns.
  return { rows: rows[0]?.page_seq == null ? [] : rows, total };
}

/** The page statement's text by shape (dialect, table, columns, logged or not). */
const compiledPages = new Map<string, string>();

/** The page statement; its values must be those of `pageParameters`, in the same order. */
function pageQuery<Row>(source: SequencedTable<Row>, scope: Scope, page: Page, viewer?: PageViewer) {
  const selected = source.columns ? sql.join(source.columns.map((column) => sql.ref(`page_table.${column}`))) : sql`page_table.*`;
  const logged = viewer ? sql`, ${accessLogOfPage(scope, viewer, 'page_id', sql`order by page.page_seq desc`)}` : sql``;
  return sql<Row & { page_total: number; page_seq: number | null }>`
    with counter as (
      select value from sequences where org_id = ${scope.orgId} and mode = ${scope.mode} and kind = ${source.kind}
    ), page as (
      select window_rows.* from counter cross join lateral (
        select page_table.seq as page_seq, page_table.id as page_id, ${selected} from ${sql.table(source.table)} page_table
        where page_table.org_id = ${scope.orgId} and page_table.mode = ${scope.mode}
          and page_table.seq > counter.value - ${page.offset + page.limit}::bigint
          and page_table.seq <= counter.value - ${page.offset}::bigint
        order by page_table.seq desc
        limit ${page.limit}
      ) window_rows
    )${logged}
    select counter.value as page_total, page.* from counter left join page on true
    order by page.page_seq desc`;
}

function pageParameters<Row>(source: SequencedTable<Row>, scope: Scope, page: Page, viewer?: PageViewer): unknown[] {
  const parameters: unknown[] = [scope.orgId, scope.mode, source.kind, scope.orgId, scope.mode, page.offset + page.limit, page.offset, page.limit];
  if (viewer) parameters.push(...accessLogOfPageParameters(scope, viewer));
  return parameters;
}

export function listEnvelope<T>(data: T[], page: Page, total: number) {
  return { status: 'success' as const, _pagination: { limit: page.limit, offset: page.offset, total }, data };
}
