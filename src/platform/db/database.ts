import fs from 'node:fs';
import path from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { Kysely, PostgresDialect, sql } from 'kysely';
import pg from 'pg';
import { FieldProtection } from '../crypto/fields.js';
import { PGliteDialect } from './pglite-dialect.js';
import { nameStatements } from './prepared.js';
import type { DB } from './schema.js';

export type DatabaseKind = 'postgres' | 'pglite';

export interface Database {
  db: Kysely<DB>;
  kind: DatabaseKind;
  /**
   * Encrypts and decrypts the personal columns (src/platform/crypto/fields.ts); its keyring is
   * loaded by `openKeyring` (src/platform/crypto/open.ts) before the app or a command uses them.
   */
  protection: FieldProtection;
  /**
   * LISTENs on `channel` and calls `onNotify` for each NOTIFY; resolves to an unlisten function.
   * A wake-up hint only: on PostgreSQL a lost connection drops notifications until it reconnects,
   * so listeners must also poll.
   */
  listen(channel: string, onNotify: (payload: string) => void): Promise<() => Promise<void>>;
  /**
   * A connection of its own, outside the pool (PostgreSQL; opened on first use, closed with the
   * database), for short statements that must not queue behind the requests' queries: the rate
   * limiter's claims, which every request may wait for. PGlite has one session: `db`.
   */
  ownConnection(): Kysely<DB>;
  /** The connections this process holds (PGlite: its one in-process session). */
  connections(): ConnectionStats;
  close(): Promise<void>;
}

export interface ConnectionStats {
  /** Open connections. */
  total: number;
  /** Open connections running no query. */
  idle: number;
  /** Queries waiting for a connection. */
  waiting: number;
  max: number;
}

// int8 (bigint) as a JS number, as PGlite already does: kobo amounts and ids stay far below 2^53.
pg.types.setTypeParser(pg.types.builtins.INT8, (value) => Number(value));

export interface DatabaseOptions {
  /** PostgreSQL connection string; without it, PGlite. */
  url?: string | undefined;
  /** PGlite data folder; `memory://` keeps it in memory (tests). */
  dataDir?: string;
  /** A PGlite data folder dumped earlier (`dumpDataDir`), to start from instead of an empty one. */
  loadDataDir?: Blob;
  /**
   * PGlite's buffer cache (`shared_buffers`, e.g. `'16MB'`); the data folder's own setting,
   * PostgreSQL's 128 MB, when not given. Starting PGlite costs CPU in proportion to it: see
   * COMMAND_SHARED_BUFFERS (src/platform/db/open.ts).
   */
  sharedBuffers?: string;
  poolSize?: number;
  /**
   * Send the registered statements (src/platform/db/prepared.ts) as named prepared statements;
   * true unless said otherwise. Off for a pooler in transaction mode that cannot keep them.
   */
  preparedStatements?: boolean;
}

export async function openDatabase(options: DatabaseOptions): Promise<Database> {
  if (options.url) {
    const pool = new pg.Pool({ connectionString: options.url, max: options.poolSize ?? 20 });
    // An idle client's error (server restart) must not crash the process; the next query reconnects.
    pool.on('error', () => {});
    if (options.preparedStatements !== false) pool.on('connect', nameStatements);
    const protection = new FieldProtection();
    const db = new Kysely<DB>({ dialect: new PostgresDialect({ pool }), plugins: [protection] });
    await sql`select 1`.execute(db);
    const listen = (channel: string, onNotify: (payload: string) => void) => listenOnPostgres(options.url!, channel, onNotify);
    const max = options.poolSize ?? 20;
    const connections = () => ({ total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount, max });
    let own: Kysely<DB> | undefined;
    const ownConnection = () => {
      if (!own) {
        const single = new pg.Pool({ connectionString: options.url, max: 1 });
        single.on('error', () => {});
        own = new Kysely<DB>({ dialect: new PostgresDialect({ pool: single }) });
      }
      return own;
    };
    const close = async () => {
      await Promise.all([db.destroy(), own?.destroy()]);
    };
    return { db, kind: 'postgres', protection, listen, ownConnection, connections, close };
  }
  const dataDir = options.dataDir ?? 'memory://';
  if (!dataDir.startsWith('memory://')) fs.mkdirSync(path.dirname(dataDir), { recursive: true });
  const pglite = await PGlite.create(dataDir, {
    ...(options.loadDataDir ? { loadDataDir: options.loadDataDir } : {}),
    ...(options.sharedBuffers ? { startParams: [...PGlite.defaultStartParams, '-c', `shared_buffers=${options.sharedBuffers}`] } : {}),
  });
  const dialect = new PGliteDialect(pglite);
  const protection = new FieldProtection();
  const db = new Kysely<DB>({ dialect, plugins: [protection] });
  // LISTEN goes through the dialect's queue: issued on the shared session in the middle of
  // someone's transaction, a rollback would undo it.
  const listen = async (channel: string, onNotify: (payload: string) => void) => {
    const forward = (from: string, payload: string) => {
      if (from === channel) onNotify(payload);
    };
    const off = pglite.onNotification(forward);
    await sql`listen ${sql.id(channel)}`.execute(db);
    return async () => {
      off();
      await sql`unlisten ${sql.id(channel)}`.execute(db);
    };
  };
  return {
    db,
    kind: 'pglite',
    protection,
    listen,
    ownConnection: () => db,
    connections: () => ({ total: 1, idle: dialect.usage.holders === 0 ? 1 : 0, waiting: Math.max(0, dialect.usage.holders - 1), max: 1 }),
    close: async () => {
      await db.destroy();
      await pglite.close();
    },
  };
}

/** A dedicated connection for LISTEN (a pooled one would be handed to other queries); reconnects after a loss. */
async function listenOnPostgres(url: string, channel: string, onNotify: (payload: string) => void): Promise<() => Promise<void>> {
  let stopped = false;
  let client: pg.Client | undefined;
  let retry: NodeJS.Timeout | undefined;
  const connect = async (): Promise<void> => {
    const next = new pg.Client({ connectionString: url });
    next.on('notification', (message) => {
      if (message.channel === channel) onNotify(message.payload ?? '');
    });
    next.on('error', () => {
      next.end().catch(() => {});
      if (client === next) reconnectSoon();
    });
    next.on('end', () => {
      if (client === next) reconnectSoon();
    });
    client = next;
    await next.connect();
    await next.query(`listen ${next.escapeIdentifier(channel)}`);
  };
  const reconnectSoon = () => {
    client = undefined;
    if (stopped || retry) return;
    retry = setTimeout(() => {
      retry = undefined;
      if (!stopped) connect().catch(reconnectSoon);
    }, 1000);
  };
  await connect();
  return async () => {
    stopped = true;
    clearTimeout(retry);
    await client?.end().catch(() => {});
  };
}
