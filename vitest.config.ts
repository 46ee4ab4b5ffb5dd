import { createRequire } from 'node:module';
import { defineConfig } from 'vitest/config';

// n8n-workflow as the n8n package resolves it (its dev dependency).
const fromN8nPackage = createRequire(new URL('./packages/n8n-nodes-clinic-api/package.json', import.meta.url));

export default defineConfig({
  resolve: {
    // n8n-workflow ships an ESM and a CommonJS build. n8n-core (CommonJS) require()s the CommonJS
    // one; the n8n package's nodes and tests get that same copy, as inside n8n, so there is one
    // Workflow class and one NodeApiError (instanceof holds across them).
    alias: [{ find: /^n8n-workflow$/, replacement: fromN8nPackage.resolve('n8n-workflow') }],
  },
  test: {
    // The packages' tests run here too, on the same databases and helpers (npm test builds them first).
    include: ['test/**/*.test.ts', 'packages/*/test/**/*.test.ts'],
    globalSetup: ['test/global-setup.ts'],
    // The suite runs with the machine in UTC and also under a far-off zone in time.test.ts:
    // no assertion may depend on process.env.TZ. n8n's logger (n8n-core's error reporter writes a
    // failed node's message to it) stays quiet in the n8n package's tests.
    env: { TZ: 'UTC', N8N_LOG_LEVEL: 'silent' },
    testTimeout: 30_000,
    hookTimeout: 120_000,
    pool: 'forks',
  },
});
