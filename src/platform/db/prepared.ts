import { createHash } from 'node:crypto';
import { CompiledQuery, sql, type Kysely, type RawBuilder } from 'kysely';
import type pg from 'pg';

/**
 * Statements run as named prepared statements on PostgreSQL: parsed once per connection, and
 * planned once too, after five calls, when the plan PostgreSQL makes for any values costs no more
 * than the plans it made for the values given (a statement whose values change its cost keeps
 * them from the planner: `unseen`). For the few statements that are both frequent and costly
 * to plan, whose text is fixed once compiled (the list pages, src/platform/pagination.ts: the
 * logged page's planning took 0.6 of its 1.15 ms in the database, docs/benchmarks.md), and for
 * the statements every identity lookup shares (`runPrepared`: the wallet's cover check and charge,
 * the registry read), where building the query cost this process more than running it.
 *
 * Registering a text is all a caller does; every pool connection (`nameStatements`) then sends
 * that text under its name, and Kysely and its plugins see no difference. PGlite plans each
 * query as before. A prepared statement is planned again by PostgreSQL when a table it reads
 * changes; it names its columns, so a migration that adds one does not change its result.
 */
const names = new Map<string, string>();

/**
 * A value of a prepared statement kept from PostgreSQL's planner: the result of a sub-select,
 * known only once the statement runs (in SQL text, `(select $1::type)`; an array compared with
 * `= any(...)` needs a cast outside it, `any((select $2::text[])::text[])`). PostgreSQL plans a
 * prepared statement for its values at its first five calls, then plans it once for any values,
 * if that plan costs no more than theirs did. With the values in sight, a page of 20, a batch of
 * one page or one blind index looked cheaper than the plan for any values (which assumes ten
 * array elements and an average limit), so PostgreSQL planned the statement again at every call:
 * on a million rows the logged list page spent 0.3 of its 0.55 ms there, and the database used
 * twice the CPU per list of the baseline's unprepared read (docs/benchmarks.md, thirteenth
 * session). Unseen, every call's plan is the generic one, and each connection keeps it. Only for
 * statements whose plan does not depend on their values: the same index scans for any of them.
 */
export function unseen(value: unknown, type: 'uuid' | 'text' | 'bigint' | 'int' | 'uuid[]' | 'text[]' | 'bigint[]' | 'int[]'): RawBuilder<unknown> {
  return sql`(select ${value}::${sql.raw(type)})`;
}

/** Runs `text` as a named prepared statement from now on, on every PostgreSQL connection. */
export function prepareStatement(text: string): void {
  if (!names.has(text)) names.set(text, `vouch_${createHash('sha256').update(text).digest('hex').slice(0, 32)}`);
}

/**
 * Runs a fixed statement (placeholders `$1`…, columns named, never `*`) with these values, as a
 * named prepared statement on PostgreSQL: no query building here, no parsing or planning there
 * after a connection's first call. Kysely's plugins still see the result (the field protection
 * decrypts the columns it knows by name).
 */
export async function runPrepared<R>(db: Kysely<any>, text: string, values: readonly unknown[]): Promise<R[]> {
  prepareStatement(text);
  const { rows } = await db.executeQuery<R>(CompiledQuery.raw(text, [...values]));
  return rows;
}

type Query = (...args: unknown[]) => unknown;

/**
 * Makes a pool connection send registered texts as named statements (`pool.on('connect', ...)`).
 * Kysely calls `query(text, values)`; every other form (a config object, a cursor) goes as it came.
 */
export function nameStatements(client: pg.PoolClient): void {
  const query = client.query as unknown as Query;
  const named: Query = function (this: unknown, ...args: unknown[]) {
    const [text, values] = args;
    const name = typeof text === 'string' && args.length === 2 && Array.isArray(values) ? names.get(text) : undefined;
    return name ? query.call(this, { name, text, values }) : query.apply(this, args);
  };
  client.query = named as unknown as typeof client.query;
}
