import { createHash } from 'node:crypto';
import { CompiledQuery, type Kysely } from 'kysely';
import type pg from 'pg';

/**
 * Statements run as named prepared statements on PostgreSQL: parsed once per connection, and
 * planned once too, after five calls, if the plan PostgreSQL makes for any values costs no more
 * than the plans it made for the values given. That holds for the identity lookup's statements;
 * the list pages keep their values from the planner so that it holds for them too (`unseen` in
 * src/platform/pagination.ts, tested in test/platform/logged-pages.test.ts: on a million rows
 * they were planned again at every call). For the few statements that are both frequent and costly
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
