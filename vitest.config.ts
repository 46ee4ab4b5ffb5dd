import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    // The packages' tests run here too, on the same databases and helpers (npm test builds them first).
    include: ['test/**/*.test.ts', 'packages/*/test/**/*.test.ts'],
    globalSetup: ['test/global-setup.ts'],
    // The suite runs with the machine in UTC and also under a far-off zone in time.test.ts:
    // no assertion may depend on process.env.TZ.
    env: { TZ: 'UTC' },
    testTimeout: 30_000,
    hookTimeout: 120_000,
    pool: 'forks',
  },
});
