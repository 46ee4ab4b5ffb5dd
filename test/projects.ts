// Which test files make up the `processes` project of vitest.config.ts: the files that start
// processes (`clinic-api` commands and servers, redis-server, their own PostgreSQL, Chromium, npm,
// curl, python...), directly or through a helper. Every other test runs in the `fast` project, in
// its worker alone. test/unit/test-projects.test.ts keeps this list true: a file that starts a
// process and is not listed, or is listed and starts none, fails it. A folder (ending in /)
// stands for every test file in it.
export const PROCESS_TESTS = [
  'test/browser/',
  'test/fleet/',
  'test/server/',
  'test/tools/',
  'test/cli/backup-refusals.test.ts',
  'test/cli/backup.test.ts',
  'test/cli/cli.test.ts',
  'test/cli/clinic-delete.test.ts',
  'test/cli/erasure.test.ts',
  'test/cli/first-run.test.ts',
  'test/cli/logs.test.ts',
  'test/cli/mirror-restart.test.ts',
  'test/cli/mirror.test.ts',
  'test/cli/node-version.test.ts',
  'test/cli/start-up.test.ts',
  'test/client/lint.test.ts',
  'test/docs/readme.test.ts',
  'test/docs/spreadsheets.test.ts',
  'test/http/code-samples.test.ts',
  'test/mcp/clients.test.ts',
  'test/oauth/fleet.test.ts',
  'test/unit/rate-limit.test.ts',
  'test/unit/time-zones.test.ts',
  'test/webhooks/local-recipe.test.ts',
  'test/webhooks/processes.test.ts',
  'test/webhooks/receivers.test.ts',
  'test/webhooks/stalled.test.ts',
  'packages/n8n-nodes-clinic-api/test/package.test.ts',
  'packages/sdk/test/browser.test.ts',
  'packages/sdk/test/pack.test.ts',
  'packages/sdk/test/retries.test.ts',
];

/** Every test file, as vitest's include finds them. */
export const ALL_TESTS = ['test/**/*.test.ts', 'packages/*/test/**/*.test.ts'];

/** PROCESS_TESTS as globs for vitest's include/exclude. */
export const PROCESS_TEST_GLOBS = PROCESS_TESTS.map((p) => (p.endsWith('/') ? `${p}**/*.test.ts` : p));
