import fs from 'node:fs';
import { fileURLToPath } from 'node:url';
import { sql, type Kysely } from 'kysely';
import type { DB } from './schema.js';

const MIGRATIONS_DIR = fileURLToPath(new URL('./migrations/', import.meta.url));
// Any constant: serialises concurrent `vouch migrate` / `vouch serve` starts on one PostgreSQL.
const MIGRATION_LOCK = 7_202_611;

export interface Migration {
  version: string;
  sql: string;
}

export function listMigrations(dir = MIGRATIONS_DIR): Migration[] {
  return fs
    .readdirSync(dir)
    .filter((name) => /^\d{4}_[a-z0-9_]+\.sql$/.test(name))
    .sort()
    .map((name) => ({ version: name.replace(/\.sql$/, ''), sql: fs.readFileSync(`${dir}/${name}`, 'utf8') }));
}

/** Applies every migration not yet applied, each in its own transaction; returns the versions applied. */
export async function migrate(db: Kysely<DB>, migrations = listMigrations()): Promise<string[]> {
  return db.connection().execute(async (conn) => {
    await sql`select pg_advisory_lock(${MIGRATION_LOCK})`.execute(conn);
    try {
      await sql`create table if not exists schema_migrations (
        version text primary key,
        applied_at timestamptz not null default now()
      )`.execute(conn);
      const applied = new Set(
        (await conn.selectFrom('schema_migrations').select('version').execute()).map((row) => row.version),
      );
      const done: string[] = [];
      for (const migration of migrations) {
        if (applied.has(migration.version)) continue;
        await conn.transaction().execute(async (trx) => {
          await sql.raw(migration.sql).execute(trx);
          await trx.insertInto('schema_migrations').values({ version: migration.version }).execute();
        });
        done.push(migration.version);
      }
      return done;
    } finally {
      await sql`select pg_advisory_unlock(${MIGRATION_LOCK})`.execute(conn);
    }
  });
}
