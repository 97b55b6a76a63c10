import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { DATABASE_FREE } from './database-free.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

/** What a test file uses to reach the database DATABASE_URL names (or the embedded one). */
const DATABASE_USE = /buildTestContext|buildWebContext|throwawayEnv|openDatabase|openConfiguredDatabase|startServer|runCli|cliJson|DATABASE_URL|onPostgres|helpers\/(app|database|portal|browser|field|cli)\.js/;

describe('the files the PostgreSQL suite leaves out', () => {
  it.each(DATABASE_FREE)('%s reaches no database', async (file) => {
    const source = await readFile(path.join(ROOT, file), 'utf8');
    expect(source.match(DATABASE_USE)?.[0], `${file} uses a database: remove it from test/database-free.ts`).toBeUndefined();
  });

  it('the guard itself sees a file that does', async () => {
    const source = await readFile(path.join(ROOT, 'test/serve.test.ts'), 'utf8');
    expect(source).toMatch(DATABASE_USE);
  });
});
