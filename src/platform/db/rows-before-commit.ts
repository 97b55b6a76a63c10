import pg from 'pg';

/**
 * Statements whose rows this process may work on while PostgreSQL commits them: a logged list
 * page (src/platform/pagination.ts) reads its rows and writes their access-log row in one
 * autocommitted statement, and its answer must wait for that commit; the rows need not. The
 * extended protocol commits an autocommitted statement at its Sync, and PostgreSQL sends what it
 * has buffered (the rows, the CommandComplete) only with the ReadyForQuery that follows the
 * commit. A Flush between Execute and Sync makes it send the rows first: the page is decrypted
 * while the WAL is flushed, in the same round trip (docs/benchmarks.md, twenty-fourth session).
 *
 * The result comes as soon as the statement has run; `committed(rows)` is the commit, which the
 * caller must wait for before it shows anything, and which fails if the commit fails (the rows
 * are then thrown away with the error). On PGlite, and for every text not registered, results
 * come after the commit as before and `committed` has nothing to wait for.
 */
const texts = new Set<string>();

/** The commit of each early result, by its rows (the array Kysely hands on, with the plugins' changes). */
const commits = new WeakMap<readonly unknown[], Promise<void>>();

/** Gives the rows of `text` before its commit from now on, on every PostgreSQL connection. */
export function rowsBeforeCommit(text: string): void {
  texts.add(text);
}

export function givesRowsBeforeCommit(text: string): boolean {
  return texts.has(text);
}

/**
 * The commit of the statement that gave `rows` (resolved at once for rows that came after theirs).
 * Rejects with the statement's error if the commit failed.
 */
export function committed(rows: readonly unknown[]): Promise<void> {
  return commits.get(rows) ?? Promise.resolve();
}

/**
 * A query that asks for its rows before its Sync (a Flush after the Execute) and resolves `early`
 * with its result at CommandComplete; its callback runs at ReadyForQuery, after the commit, or
 * with the error if the statement or its commit failed.
 */
class EarlyRowsQuery extends pg.Query {
  constructor(
    config: pg.QueryConfig,
    callback: (error: Error | undefined) => void,
    private readonly early: (result: pg.QueryResult) => void,
  ) {
    super(config, callback);
  }

  /** What pg's Query sends after Bind and Describe: the Execute, then (here) a Flush, then the Sync. */
  _getRows(connection: ProtocolConnection, rows: number | undefined): void {
    connection.execute({ portal: (this as unknown as PgQueryState).portal, rows });
    connection.flush();
    connection.sync();
  }

  handleCommandComplete(message: unknown, connection: ProtocolConnection): void {
    pgQueryMethods.handleCommandComplete.call(this, message, connection);
    this.early((this as unknown as PgQueryState)._result);
  }
}

/** The parts of pg's connection and Query (pg/lib/query.js) this subclass uses, which its types do not declare. */
interface ProtocolConnection {
  execute(message: { portal: string; rows: number | undefined }): void;
  flush(): void;
  sync(): void;
}
interface PgQueryState {
  portal: string;
  _result: pg.QueryResult;
}
const pgQueryMethods = pg.Query.prototype as unknown as { handleCommandComplete(this: pg.Query, message: unknown, connection: ProtocolConnection): void };

/**
 * Sends `config` on `client` as an early-rows query: resolves with the result when the statement
 * has run, and records its commit for `committed`. The commit's promise always has a handler, so a
 * commit that fails after its caller has gone (the decryption threw first) is no unhandled rejection.
 */
export function queryRowsBeforeCommit(client: { query(query: pg.Submittable): unknown }, config: pg.QueryConfig): Promise<pg.QueryResult> {
  return new Promise((resolve, reject) => {
    let given = false;
    let settleCommit!: (error: Error | undefined) => void;
    const commit = new Promise<void>((resolveCommit, rejectCommit) => {
      settleCommit = (error) => (error ? rejectCommit(error) : resolveCommit());
    });
    commit.catch(() => {});
    const query = new EarlyRowsQuery(
      config,
      (error) => {
        settleCommit(error);
        if (!given) {
          // The statement failed before its rows, or gave none before its end: answer as any query does.
          given = true;
          if (error) reject(error);
          else resolve((query as unknown as PgQueryState)._result);
        }
      },
      (result) => {
        if (given) return;
        given = true;
        commits.set(result.rows, commit);
        resolve(result);
      },
    );
    client.query(query);
  });
}
