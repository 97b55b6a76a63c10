import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { sql, type Kysely } from 'kysely';
import { inject } from 'vitest';
import { kekOf, Keyring } from '../../src/platform/crypto/keyring.js';
import { openDatabase, type Database } from '../../src/platform/db/database.js';
import { migrate } from '../../src/platform/db/migrate.js';
import type { DB } from '../../src/platform/db/schema.js';
import { adminQuery } from './postgres-admin.js';

/**
 * The key-encryption key of every test database (VOUCH_ENCRYPTION_KEY of test apps, see
 * testConfig, and of CLI processes on PostgreSQL, see throwawayEnv).
 */
export const TEST_ENCRYPTION_KEY = Buffer.alloc(32, 0x5a);

/** Loads the database's keyring under the test key, making its data keys when it has none. */
async function withKeyring<T extends Database>(database: T): Promise<T> {
  database.protection.keyring?.close();
  database.protection.keyring = await Keyring.open(database.db, { kek: kekOf(TEST_ENCRYPTION_KEY) });
  return database;
}

export interface TestDatabase extends Database {
  /** On PostgreSQL, the throwaway database's URL (for a second connection to it). */
  url?: string;
  /** Closes the database and, on PostgreSQL, drops the throwaway database. */
  cleanup(): Promise<void>;
}

/**
 * A migrated database of its own for one test file: in-memory PGlite by default (loaded from the
 * run's migrated template, see test/global-setup.ts), or a fresh throwaway database on the
 * server named by DATABASE_URL, so files can run in parallel.
 */
export async function openTestDatabase(): Promise<TestDatabase> {
  const serverUrl = process.env.DATABASE_URL;
  if (!serverUrl) return openEmbedded();
  const name = `vouch_test_${randomBytes(6).toString('hex')}`;
  // From the run's migrated template (test/global-setup.ts): the migrations below find nothing to do.
  await adminQuery(serverUrl, `create database ${name} template ${inject('postgresTemplate')}`);
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  const database = await openDatabase({ url: url.toString(), poolSize: 30 });
  await migrate(database.db);
  await withKeyring(database);
  return {
    ...database,
    url: url.toString(),
    cleanup: async () => {
      await database.close();
      await adminQuery(serverUrl, `drop database if exists ${name} with (force)`);
    },
  } as TestDatabase;
}

/**
 * The in-memory database this test worker keeps between its files. Vitest runs a worker's files
 * one after another in one process (isolate: false), so the next file to ask for a database gets
 * it back emptied to the migrated template (every table truncated, identities restarted, the rows
 * the migrations seed put back) in tens of milliseconds, instead of a new PGlite (about 0.7 s of
 * CPU each). A file that opens a second database while the first is in use gets a new one of its
 * own, closed at its cleanup as before.
 */
let kept: { database: Database; template: Template; inUse: boolean } | undefined;

async function openEmbedded(): Promise<TestDatabase> {
  if (kept && !kept.inUse) {
    const reused = kept;
    reused.inUse = true;
    await resetToTemplate(reused.database.db, reused.template);
    // The data keys went with the reset: new ones, as a new database would get.
    await withKeyring(reused.database);
    return lend(reused);
  }
  const template = new Blob([await readFile(inject('pgliteTemplateDump'))]);
  const database = await openDatabase({ dataDir: 'memory://', loadDataDir: template });
  await migrate(database.db);
  if (kept) return { ...(await withKeyring(database)), cleanup: () => database.close() };
  kept = { database, template: await snapshot(database.db), inUse: true };
  await withKeyring(database);
  return lend(kept);
}

/** The kept database for one file: closing it gives it back to the worker instead. */
function lend(entry: { database: Database; inUse: boolean }): TestDatabase {
  const giveBack = async () => {
    entry.inUse = false;
  };
  return { ...entry.database, close: giveBack, cleanup: giveBack };
}

/** The migrated template as a reset needs it: its tables, and the rows the migrations seed in some. */
interface Template {
  tables: string[];
  rows: Map<string, unknown[]>;
}

async function snapshot(db: Kysely<DB>): Promise<Template> {
  const { rows: names } = await sql<{ name: string }>`
    select tablename as name from pg_tables where schemaname = 'public' and tablename <> 'schema_migrations' order by tablename`.execute(db);
  const template: Template = { tables: names.map((row) => row.name), rows: new Map() };
  for (const table of template.tables) {
    const { rows } = await sql<Record<string, unknown>>`select * from ${sql.table(table)}`.execute(db);
    if (rows.length > 0) template.rows.set(table, rows);
  }
  return template;
}

async function resetToTemplate(db: Kysely<DB>, template: Template): Promise<void> {
  await db.transaction().execute(async (trx) => {
    await sql`truncate ${sql.join(template.tables.map((name) => sql.table(name)))} restart identity cascade`.execute(trx);
    for (const [table, rows] of template.rows) {
      await sql`insert into ${sql.table(table)} select * from json_populate_recordset(null::${sql.table(table)}, ${JSON.stringify(rows)})`.execute(trx);
    }
  });
}
