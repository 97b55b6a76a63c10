import os from 'node:os';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Compiles the CLI once and migrates a template database (see the file).
    globalSetup: ['test/global-setup.ts'],
    // PGlite needs a few seconds to initialise per file.
    testTimeout: 30_000,
    hookTimeout: 120_000,
    pool: 'forks',
    // Most files wait on sockets, child processes and Chromium: two at a time even on two cores.
    maxWorkers: Math.max(2, os.availableParallelism() - 1),
  },
});
