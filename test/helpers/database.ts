import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import pg from 'pg';
import { inject } from 'vitest';
import { openDatabase, type Database } from '../../src/platform/db/database.js';
import { migrate } from '../../src/platform/db/migrate.js';

export interface TestDatabase extends Database {
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
  if (!serverUrl) {
    const template = new Blob([await readFile(inject('pgliteTemplateDump'))]);
    const database = await openDatabase({ dataDir: 'memory://', loadDataDir: template });
    await migrate(database.db);
    return { ...database, cleanup: () => database.close() };
  }
  const name = `vouch_test_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  await admin.query(`create database ${name}`);
  await admin.end();
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  const database = await openDatabase({ url: url.toString(), poolSize: 30 });
  await migrate(database.db);
  return {
    ...database,
    url: url.toString(),
    cleanup: async () => {
      await database.close();
      const dropper = new pg.Client({ connectionString: serverUrl });
      await dropper.connect();
      await dropper.query(`drop database if exists ${name} with (force)`);
      await dropper.end();
    },
  } as TestDatabase;
}
