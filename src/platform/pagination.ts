import { CompiledQuery, sql, type Kysely, type RawBuilder, type Transaction } from 'kysely';
import { Type } from 'typebox';
import { accessLogOfPage, type PageViewer } from '../access-log/service.js';
import { Batches } from './batches.js';
import { prepareStatement, unseen } from './db/prepared.js';
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
  /** The column whose value the access log records for each row shown (`id` when absent). */
  loggedId?: string;
}

/**
 * One page of a sequenced table, newest first, with the exact total, in one statement: the
 * scope's counter gives the total and the page is the `seq` range below it, so the cost is an
 * index range scan whatever the offset. A scope with no counter has no rows (total 0).
 *
 * With a `viewer`, the page is written to the personal data access log (src/access-log) as one
 * row naming its records, by the statement that reads the page: the page and its log row commit
 * together, before the answer, in one round trip. Logged pages of one shape that are asked for at the same time are
 * read and logged by one statement (`loggedPagesOf`): lists are the most frequent reads, and under
 * load a statement and a commit per list was what they cost the database most. The page is
 * decrypted once the commit is done: asking PostgreSQL for the rows before it (a Flush before the
 * Sync) and decrypting them during the commit was tried twice, and the paced p99 went either way
 * for more CPU per list (docs/benchmarks.md, twenty-second and twenty-fourth sessions).
 *
 * The statement's text depends only on its shape (table, columns), so it is compiled once per
 * shape and each call sends only its parameters: building and compiling the query was a
 * measurable part of each list (docs/benchmarks.md).
 */
export function pageBySequence<Row>(db: Kysely<DB>, source: SequencedTable<Row>, scope: Scope, page: Page, viewer?: PageViewer): Promise<{ rows: Row[]; total: number }> {
  if (viewer) return loggedPagesOf(db).add(shapeOf(db, source), { source, scope, page, viewer }) as Promise<{ rows: Row[]; total: number }>;
  return singlePage(db, shapeOf(db, source), source, scope, page);
}

/** The text of a statement by shape (dialect, table, columns, logged or not). */
const compiledStatements = new Map<string, string>();

/** A sequenced table whatever its row type. */
type AnyTable = Pick<SequencedTable<unknown>, 'table' | 'kind' | 'loggedId'> & { columns?: readonly string[] };

function shapeOf(db: Kysely<DB>, source: AnyTable): string {
  return `${db.getExecutor().adapter.constructor.name}|${source.table}|${source.kind}|${source.columns?.join(',') ?? '*'}|${source.loggedId ?? 'id'}`;
}

/**
 * Runs a statement compiled once per shape: `build` makes it (values in `parameters` order, which
 * is checked on first use, since later calls send their values by position). A `prepared` one is
 * also planned once per connection on PostgreSQL (src/platform/db/prepared.ts): only a statement
 * that names its columns, whose result a migration adding a column cannot change.
 */
async function runCompiled<R>(db: Kysely<DB>, shape: string, parameters: readonly unknown[], prepared: boolean, build: () => { compile(db: Kysely<DB>): CompiledQuery }): Promise<R[]> {
  let text = compiledStatements.get(shape);
  if (text === undefined) {
    const compiled = build().compile(db);
    if (compiled.parameters.length !== parameters.length || compiled.parameters.some((value, i) => value !== parameters[i])) {
      throw new Error(`pagination: the parameters of ${shape} do not match its statement`);
    }
    text = compiled.sql;
    compiledStatements.set(shape, text);
    if (prepared) prepareStatement(text);
  }
  const { rows } = await db.executeQuery<R>(CompiledQuery.raw(text, [...parameters]));
  return rows;
}

function selectedColumns(source: AnyTable) {
  return source.columns ? sql.join(source.columns.map((column) => sql.ref(`page_table.${column}`))) : sql`page_table.*`;
}

/**
 * The rows of one page, for a lateral join: the scope's rows with `seq` in (`after`, `upTo`],
 * newest first, at most `limit`; each with its `seq` and the id the access log records.
 */
function pageWindow(source: AnyTable, at: { orgId: RawBuilder<unknown>; mode: RawBuilder<unknown>; after: RawBuilder<unknown>; upTo: RawBuilder<unknown>; limit: RawBuilder<unknown> }) {
  return sql`(
        select page_table.seq as page_seq, ${sql.ref(`page_table.${source.loggedId ?? 'id'}`)} as page_id, ${selectedColumns(source)} from ${sql.table(source.table)} page_table
        where page_table.org_id = ${at.orgId} and page_table.mode = ${at.mode}
          and page_table.seq > ${at.after} and page_table.seq <= ${at.upTo}
        order by page_table.seq desc
        limit ${at.limit}
      ) window_rows`;
}

type PageRow<Row> = Row & { page_total: number | string | null; page_seq: number | null };

/**
 * One page and its total in one statement (`shape`: its table's, from `shapeOf`, which the batch of
 * a logged page has already made). With a `viewer`, the same statement writes the page's
 * access-log row (`accessLogOfPage`): what a batch of one logged page runs, a statement with
 * none of the batch's arrays to unnest and join (docs/benchmarks.md, seventeenth session).
 */
async function singlePage<Row>(db: Kysely<DB>, shape: string, source: AnyTable, scope: Scope, page: Page, viewer?: PageViewer): Promise<{ rows: Row[]; total: number }> {
  const parameters: unknown[] = [scope.orgId, scope.mode, source.kind, scope.orgId, scope.mode, page.offset + page.limit, page.offset, page.limit];
  if (viewer) parameters.push(scope.orgId, scope.mode, viewer.actorKind, viewer.actorId, viewer.channel, viewer.action, viewer.resource, viewer.ip);
  const rows = await runCompiled<PageRow<Row>>(db, viewer ? `${shape}|logged one` : shape, parameters, source.columns !== undefined, () => sql`
    with counter as (
      select value from sequences where org_id = ${unseen(scope.orgId, 'uuid')} and mode = ${unseen(scope.mode, 'text')} and kind = ${unseen(source.kind, 'text')}
    ), page as (
      select window_rows.* from counter cross join lateral ${pageWindow(source, {
        orgId: unseen(scope.orgId, 'uuid'),
        mode: unseen(scope.mode, 'text'),
        after: sql`counter.value - ${unseen(page.offset + page.limit, 'bigint')}`,
        upTo: sql`counter.value - ${unseen(page.offset, 'bigint')}`,
        limit: unseen(page.limit, 'int'),
      })}
    )${viewer ? sql`, ${accessLogOfPage(scope, viewer, 'page_id', sql`order by page.page_seq desc`)}` : sql``}
    select counter.value as page_total, page.* from counter left join page on true
    order by page.page_seq desc`);
  const total = rows.length === 0 ? 0 : Number(rows[0]!.page_total);
  // Past the end, the left join still gives the counter's one row, with no page columns.
  return { rows: rows[0]?.page_seq == null ? [] : rows, total };
}

/** A logged page asked for: what to read, and who it is shown to. */
interface LoggedPage {
  source: AnyTable;
  scope: Scope;
  page: Page;
  viewer: PageViewer;
}

/**
 * Statements in flight per shape, and pages per statement: several small statements, so the
 * database reads some pages while this process decrypts and renders others. One statement at a
 * time left them taking turns (0.77 of the floor's saturated throughput, p50 5.2-5.7 ms at 500
 * req/s against 3.4-3.6 with four); statements of up to 64 pages kept a whole batch's rows alive
 * through its decryption (0.80 against 0.90 with 6; 3 and 10 pages, or 8 in flight, were between:
 * docs/benchmarks.md).
 */
const LOGGED_PAGE_STATEMENTS_IN_FLIGHT = 4;
const LOGGED_PAGES_PER_STATEMENT = 6;

const loggedPageBatches = new WeakMap<Kysely<DB>, Batches<LoggedPage, { rows: unknown[]; total: number }>>();

/**
 * The group commit of logged pages (src/platform/batches.ts): per shape, once its statements in
 * flight are all taken, the next one reads every page asked for meanwhile, whatever their
 * organizations, modes, offsets and viewers, and writes their log rows; each caller gets its own
 * page once that statement has committed. At low load a statement holds one page and nothing
 * waits; such a batch of one runs the statement of one page (`singlePage`), which costs the
 * database less than the batch statement does for one page.
 */
function loggedPagesOf(db: Kysely<DB>): Batches<LoggedPage, { rows: unknown[]; total: number }> {
  let batches = loggedPageBatches.get(db);
  if (!batches) {
    batches = new Batches(
      async (shape, pages) => {
        if (pages.length > 1) return readAndLogPages(db, shape, pages);
        const { source, scope, page, viewer } = pages[0]!;
        return [await singlePage<Record<string, unknown>>(db, shape, source, scope, page, viewer)];
      },
      LOGGED_PAGES_PER_STATEMENT,
      LOGGED_PAGE_STATEMENTS_IN_FLIGHT,
    );
    loggedPageBatches.set(db, batches);
  }
  return batches;
}

/**
 * The pages of one shape and their access-log rows, in one statement: the requests are a table
 * (one array parameter per field, in request order), each joined to its own counter and its own
 * `seq` range; each request's page is one log row naming its records in page order (none for an
 * empty page); the answer's rows say which request they belong to (`page_for`), a request with no
 * rows still giving its counter's row.
 */
async function readAndLogPages(db: Kysely<DB>, shape: string, pages: readonly LoggedPage[]): Promise<{ rows: unknown[]; total: number }[]> {
  const source = pages[0]!.source;
  const field = <T>(pick: (page: LoggedPage) => T) => pages.map(pick);
  const parameters = [
    field((page) => page.scope.orgId),
    field((page) => page.scope.mode),
    field((page) => page.page.offset),
    field((page) => page.page.limit),
    field((page) => page.viewer.actorKind),
    field((page) => page.viewer.actorId),
    field((page) => page.viewer.channel),
    field((page) => page.viewer.action),
    field((page) => page.viewer.resource),
    field((page) => page.viewer.ip),
    source.kind,
  ];
  const [orgIds, modes, offsets, limits, actorKinds, actorIds, channels, actions, resources, ips, kind] = parameters;
  const rows = await runCompiled<PageRow<Record<string, unknown>> & { page_for: number }>(db, `${shape}|logged`, parameters, source.columns !== undefined, () => sql`
    with request as (
      select * from unnest(
        ${unseen(orgIds, 'uuid[]')}, ${unseen(modes, 'text[]')}, ${unseen(offsets, 'bigint[]')}, ${unseen(limits, 'int[]')}, ${unseen(actorKinds, 'text[]')},
        ${unseen(actorIds, 'text[]')}, ${unseen(channels, 'text[]')}, ${unseen(actions, 'text[]')}, ${unseen(resources, 'text[]')}, ${unseen(ips, 'text[]')}
      ) with ordinality as r(org_id, mode, page_offset, page_limit, actor_kind, actor_id, channel, action, resource, ip, n)
    ), counter as (
      select request.n, sequences.value from request
      join sequences on sequences.org_id = request.org_id and sequences.mode = request.mode and sequences.kind = ${unseen(kind, 'text')}
    ), page as (
      select counter.n as page_request, window_rows.* from counter join request on request.n = counter.n cross join lateral ${pageWindow(source, {
        orgId: sql.ref('request.org_id'),
        mode: sql.ref('request.mode'),
        after: sql`counter.value - (request.page_offset + request.page_limit)`,
        upTo: sql`counter.value - request.page_offset`,
        limit: sql.ref('request.page_limit'),
      })}
    ), logged_access as (
      insert into personal_data_access (org_id, mode, actor_kind, actor_id, channel, action, resource, resource_ids, ip)
      select request.org_id, request.mode, request.actor_kind, request.actor_id, request.channel, request.action, request.resource, shown.ids, request.ip
      from request cross join lateral (
        select array_agg(page.page_id::text order by page.page_seq desc) as ids from page where page.page_request = request.n
      ) shown
      where shown.ids is not null
      order by request.n
    )
    select request.n::int as page_for, counter.value as page_total, page.* from request
    left join counter on counter.n = request.n
    left join page on page.page_request = request.n
    order by request.n, page.page_seq desc`);
  const answers = pages.map(() => ({ rows: [] as unknown[], total: 0 }));
  for (const row of rows) {
    const answer = answers[Number(row.page_for) - 1]!;
    answer.total = Number(row.page_total ?? 0);
    if (row.page_seq != null) answer.rows.push(row);
  }
  return answers;
}

export function listEnvelope<T>(data: T[], page: Page, total: number) {
  return { status: 'success' as const, _pagination: { limit: page.limit, offset: page.offset, total }, data };
}
