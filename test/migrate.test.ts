import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrate } from '../src/platform/db/migrate.js';
import { openTestDatabase, type TestDatabase } from './helpers/database.js';

describe('migrations', () => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await openTestDatabase();
  });
  afterAll(() => database.cleanup());

  it('are applied once and then are a no-op', async () => {
    const applied = await database.db.selectFrom('schema_migrations').select('version').execute();
    expect(applied.map((row) => row.version)).toContain('0001_foundation');
    expect(await migrate(database.db)).toEqual([]);
  });
});
