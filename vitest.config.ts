import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // PGlite needs a few seconds to initialise per file.
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
  },
});
