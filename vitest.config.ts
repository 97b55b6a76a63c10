import os from 'node:os';
import { configDefaults, defineConfig } from 'vitest/config';
import { BROWSER_TESTS, DATABASE_FREE } from './test/database-free.js';
import { SlowFirstSequencer } from './test/sequencer.js';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // On PostgreSQL, not the files in which no database plays a part, nor the browser tests: the
    // embedded suite runs them (test/database-free.ts says why).
    exclude: [...configDefaults.exclude, ...(process.env.DATABASE_URL ? [...DATABASE_FREE, ...BROWSER_TESTS] : [])],
    // Compiles the CLI once and migrates a template database (see the file).
    globalSetup: ['test/global-setup.ts'],
    // A hang guard, not a speed test: on a slow two-core CI machine, tests without a limit of their
    // own took up to 15 s, half of the 30 s this was (docs/benchmarks.md, twentieth session).
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // expect.poll waits 1 s by default: a page that reloads and fetches took longer on a slow
    // two-core CI machine running two files and Chromium (portal-journey, 2026-11-30). A longer
    // wait only delays a failure.
    expect: { poll: { timeout: 10_000 } },
    pool: 'forks',
    // A worker runs its files one after another in one process and keeps the modules it loaded
    // (and its embedded database, test/helpers/database.ts): loading the app's modules again for
    // every file cost more CPU than most files' tests. Files keep their state to themselves: each
    // builds its own app and organizations, and module-level caches are keyed by secret or id.
    isolate: false,
    sequence: { sequencer: SlowFirstSequencer },
    // Files wait on sockets, child processes and Chromium: with one file per core the CPU idled a
    // third of the time. Two per core kept a two-core machine busy: the embedded suite took 518 s
    // instead of about 760 s, the PostgreSQL suite 434 s (docs/benchmarks.md, thirty-second session).
    maxWorkers: Math.min(8, 2 * os.availableParallelism()),
  },
});
