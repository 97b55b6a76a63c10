import { AsyncLocalStorage } from 'node:async_hooks';
import { createHash } from 'node:crypto';
import { CompiledQuery, sql, type Kysely, type RawBuilder } from 'kysely';
import pg from 'pg';

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

/** What `rowsBeforeCommit` hands the next registered statement run in its call. */
interface RowsWanted {
  onRows: ((rows: Record<string, unknown>[]) => void) | undefined;
}

const rowsWanted = new AsyncLocalStorage<RowsWanted>();

/**
 * Runs `work`, whose first registered statement (on PostgreSQL, with prepared statements on) hands
 * its rows to `onRows` as soon as the statement has run, before its transaction commits: the
 * caller can work on them (decrypt a page) while PostgreSQL waits for the commit's write to disk.
 * `work`'s own result still comes once the commit is done, or fails if it fails, so nothing may
 * leave the process from `onRows`. Elsewhere (PGlite, a statement not registered) `onRows` is not
 * called and `work` runs as it would.
 */
export function rowsBeforeCommit<T>(onRows: (rows: Record<string, unknown>[]) => void, work: () => Promise<T>): Promise<T> {
  return rowsWanted.run({ onRows }, work);
}

/**
 * A named statement that asks PostgreSQL for its rows before the commit: after Execute, a Flush
 * makes the server send what the statement produced, then the Sync ends the implicit transaction
 * (the commit, and its wait for the disk) and brings ReadyForQuery, where `pg` settles the query.
 * Without the Flush, the server sends the last rows with ReadyForQuery, after the commit.
 */
class RowsBeforeCommit extends pg.Query {
  private onRows: ((rows: Record<string, unknown>[]) => void) | undefined;

  constructor(config: pg.QueryConfig, callback: (error: Error | undefined, result: unknown) => void, onRows: (rows: Record<string, unknown>[]) => void) {
    super(config, callback);
    this.onRows = onRows;
  }

  // `pg`'s Query (8.x) sends Execute then Sync from `_getRows`, and records a command's rows in `_result`.
  _getRows(connection: { execute(config: unknown): void; flush(): void; sync(): void }, rows: number | undefined): void {
    if (rows) throw new Error('rowsBeforeCommit: a statement read in portions is not supported');
    connection.execute({ portal: (this as unknown as { portal: string }).portal, rows });
    connection.flush();
    connection.sync();
  }

  handleCommandComplete(message: unknown, connection: unknown): void {
    (pg.Query.prototype as unknown as { handleCommandComplete(message: unknown, connection: unknown): void }).handleCommandComplete.call(this, message, connection);
    const onRows = this.onRows;
    this.onRows = undefined;
    onRows?.((this as unknown as { _result: { rows: Record<string, unknown>[] } })._result.rows);
  }
}

/**
 * Makes a pool connection send registered texts as named statements (`pool.on('connect', ...)`).
 * Kysely calls `query(text, values)`; every other form (a config object, a cursor) goes as it came.
 * Inside `rowsBeforeCommit`, the first registered statement also hands its rows over early.
 */
export function nameStatements(client: pg.PoolClient): void {
  const query = client.query as unknown as Query;
  const named: Query = function (this: unknown, ...args: unknown[]) {
    const [text, values] = args;
    const name = typeof text === 'string' && args.length === 2 && Array.isArray(values) ? names.get(text) : undefined;
    if (!name) return query.apply(this, args);
    const wanted = rowsWanted.getStore();
    const onRows = wanted?.onRows;
    if (!onRows) return query.call(this, { name, text, values });
    wanted.onRows = undefined;
    return new Promise((resolve, reject) => {
      const settle = (error: Error | undefined, result: unknown) => (error ? reject(error) : resolve(result));
      query.call(this, new RowsBeforeCommit({ name, text: text as string, values: values as unknown[] }, settle, onRows));
    });
  };
  client.query = named as unknown as typeof client.query;
}
