import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { describe, expect, inject, it } from 'vitest';
import { COMMAND_SHARED_BUFFERS, openConfiguredDatabase } from '../../src/platform/db/open.js';
import { onPostgres } from '../helpers/cli.js';

/**
 * The embedded database's buffer cache: a command that runs and exits opens it with a small one,
 * which PGlite sets up in a fraction of the CPU (src/platform/db/open.ts); the server keeps
 * PostgreSQL's 128 MB. Nothing here depends on DATABASE_URL: it runs once, in the embedded suite.
 */
describe.skipIf(onPostgres)('opening the embedded database', () => {
  it('gives a command a 16 MB buffer cache and the server 128 MB, on the same data folder', { timeout: 60_000 }, async () => {
    const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'vouch-open-'));
    try {
      await fs.cp(inject('pgliteTemplateDir'), dataDir, { recursive: true });
      const config = { databaseUrl: undefined, databasePoolSize: 1, databasePreparedStatements: true, dataDir };
      const sharedBuffers = async (command: boolean) => {
        const database = await openConfiguredDatabase(config, { command });
        try {
          const { rows } = await sql<{ shared_buffers: string }>`show shared_buffers`.execute(database.db);
          const { rows: applied } = await sql<{ count: string }>`select count(*)::text as count from schema_migrations`.execute(database.db);
          expect(Number(applied[0]!.count)).toBeGreaterThan(0);
          return rows[0]!.shared_buffers;
        } finally {
          await database.close();
        }
      };
      expect(COMMAND_SHARED_BUFFERS).toBe('16MB');
      expect(await sharedBuffers(true)).toBe('16MB');
      expect(await sharedBuffers(false)).toBe('128MB');
    } finally {
      await fs.rm(dataDir, { recursive: true, force: true });
    }
  });
});
