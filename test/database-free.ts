/**
 * Test files in which no database plays a part: the liveness engine on its fixtures, the types
 * generated from the OpenAPI document (made from an in-memory PGlite whatever DATABASE_URL says),
 * the replay command's engine, the build's start-up. With DATABASE_URL set, vitest.config.ts
 * leaves them out: the embedded suite ran them, and on PostgreSQL they would run the same code
 * again (about 90 s of a two-core CI machine's PostgreSQL suite; docs/benchmarks.md, twenty-fifth
 * session). test/database-free.test.ts fails if one of them comes to use a database.
 */
export const DATABASE_FREE: readonly string[] = [
  'test/liveness/engine.test.ts',
  'test/liveness/replay-cli.test.ts',
  'test/web/openapi-types.test.ts',
  'test/openapi/api-types.test.ts',
  'test/cli-startup.test.ts',
  'test/unit/face-stats.test.ts',
  'test/unit/face-engine.test.ts',
  'test/screening/formats.test.ts',
  'test/screening/formats-kit.test.ts',
  'test/screening/matching.test.ts',
];

/**
 * The browser tests, which with DATABASE_URL vitest.config.ts also leaves out: they drive the
 * pages, and the API behind the pages runs on PostgreSQL in the portal's and console's own tests
 * (test/portal, test/console), while the embedded suite, on PGlite (PostgreSQL's own engine),
 * drives every page. On PostgreSQL they ran the same pages again: 30 files, about 90 s of the test
 * processes' CPU plus Chromium's, on a two-core CI machine whose whole run had come within a few
 * minutes of its 25 (docs/benchmarks.md, thirty-second session).
 */
export const BROWSER_TESTS: readonly string[] = ['test/web/**'];
