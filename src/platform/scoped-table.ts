import type { Kysely, Selectable, Transaction, Updateable } from 'kysely';
import type { PageViewer } from '../access-log/service.js';
import type { DB } from './db/schema.js';
import { pageBySequence, type Page, type Scope } from './pagination.js';

/** Customer records: every row belongs to one organization and mode, and has a reference and a list position. */
interface ScopedColumns {
  id: unknown;
  org_id: unknown;
  mode: unknown;
  reference: unknown;
  seq: unknown;
}

export type ScopedTableName = { [T in keyof DB]: DB[T] extends ScopedColumns ? T : never }[keyof DB] & string;

/**
 * The reads and writes every workflow resource does by id, each one scoped: a row of another
 * organization or mode is simply not there (the caller answers 404).
 */
export interface ScopedTable<T extends ScopedTableName> {
  find(db: Kysely<DB>, scope: Scope, id: number): Promise<Selectable<DB[T]> | undefined>;
  /** The row, locked until the transaction ends: every state change starts here. */
  lock(trx: Transaction<DB>, scope: Scope, id: number, options?: { skipLocked?: boolean }): Promise<Selectable<DB[T]> | undefined>;
  update(trx: Transaction<DB>, scope: Scope, id: number, patch: Updateable<DB[T]>): Promise<Selectable<DB[T]>>;
  referenceTaken(db: Kysely<DB>, scope: Scope, reference: string): Promise<boolean>;
  /**
   * Newest first; the page is a range of `seq`, so its cost does not grow with the offset. With a
   * `viewer`, the page's rows are written to the access log by the same statement.
   */
  page<Row = Selectable<DB[T]>>(db: Kysely<DB>, scope: Scope, page: Page, columns?: readonly (keyof Row & string)[], viewer?: PageViewer): Promise<{ rows: Row[]; total: number }>;
}

/**
 * The scoped reads and writes of `table`, whose rows are numbered by the `sequences` kind `kind`.
 * The table name is only known as a type parameter here, which Kysely's query builder cannot
 * check; the queries are built on an untyped view of the same connection, and their results
 * typed back through the table's row type.
 */
export function scopedTable<T extends ScopedTableName>(table: T, kind: string): ScopedTable<T> {
  const untyped = (db: Kysely<DB>) => db as unknown as Kysely<any>;
  const name: string = table;
  type Row = Selectable<DB[T]>;
  const byId = (db: Kysely<DB>, scope: Scope, id: number) =>
    untyped(db).selectFrom(name).selectAll().where('org_id', '=', scope.orgId).where('mode', '=', scope.mode).where('id', '=', id);

  return {
    async find(db, scope, id) {
      return (await byId(db, scope, id).executeTakeFirst()) as Row | undefined;
    },
    async lock(trx, scope, id, options = {}) {
      let query = byId(trx, scope, id).forUpdate();
      if (options.skipLocked) query = query.skipLocked();
      return (await query.executeTakeFirst()) as Row | undefined;
    },
    async update(trx, scope, id, patch) {
      return (await untyped(trx)
        .updateTable(name)
        .set(patch as Record<string, unknown>)
        .where('org_id', '=', scope.orgId)
        .where('mode', '=', scope.mode)
        .where('id', '=', id)
        .returningAll()
        .executeTakeFirstOrThrow()) as Row;
    },
    async referenceTaken(db, scope, reference) {
      const row = await untyped(db)
        .selectFrom(name)
        .select('id')
        .where('org_id', '=', scope.orgId)
        .where('mode', '=', scope.mode)
        .where('reference', '=', reference)
        .executeTakeFirst();
      return row !== undefined;
    },
    page(db, scope, page, columns, viewer) {
      return pageBySequence(db, { table, kind, ...(columns ? { columns } : {}) }, scope, page, viewer);
    },
  };
}
