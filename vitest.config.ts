import { availableParallelism } from 'node:os';
import { configDefaults, defineConfig, type Plugin, type TestProjectInlineConfiguration } from 'vitest/config';
import { ENGINE_DIR, engineRequire } from './packages/n8n-nodes-clinic-api/test/engine/engine.mjs';
import { ALL_TESTS, PROCESS_TEST_GLOBS } from './test/projects.js';

/**
 * n8n-core and n8n-workflow for the n8n package's nodes and tests: from the package's n8n engine
 * (test/engine, installed by its global setup below), resolved when first imported, as the engine
 * is absent until then. n8n-workflow ships an ESM and a CommonJS build; n8n-core (CommonJS)
 * require()s the CommonJS one, and the nodes and tests get that same copy, as inside n8n, so there
 * is one Workflow class and one NodeApiError (instanceof holds across them).
 */
const n8nEngine: Plugin = {
  name: 'n8n-engine',
  enforce: 'pre',
  resolveId(id) {
    if (id !== 'n8n-core' && id !== 'n8n-workflow') return null;
    try {
      return engineRequire.resolve(id);
    } catch {
      throw new Error(
        `${id}: n8n's engine for the n8n package's tests is not installed in ${ENGINE_DIR}node_modules. ` +
          'Run `npm run typecheck -w n8n-nodes-clinic-api` (it installs it), or start vitest again: its global setup does.',
      );
    }
  },
};

/** What both projects share; each adds its files and time limits. */
const shared: TestProjectInlineConfiguration = {
  plugins: [n8nEngine],
  test: {
    // The suite runs with the machine in UTC and also under far-off zones in time-zones.test.ts:
    // no assertion may depend on process.env.TZ. n8n's logger (n8n-core's error reporter writes a
    // failed node's message to it) stays quiet in the n8n package's tests.
    env: { TZ: 'UTC', N8N_LOG_LEVEL: 'silent' },
    pool: 'forks',
  },
};

// Two projects, both run by `npm test` (`npx vitest run --project fast` runs one alone):
//  - fast: everything in the test's own process (app.inject, real SQLite and PostgreSQL, HTTP on
//    127.0.0.1): seconds per file;
//  - processes: the files that start processes (test/projects.ts says which, and
//    test/unit/test-projects.test.ts keeps that list true): `clinic-api` commands and servers,
//    redis-server, a PostgreSQL of their own, Chromium, npm pack.
export default defineConfig({
  test: {
    // Run once for both projects (vitest runs the root's global setup and gives its projects
    // what it provides): the one PostgreSQL of the run.
    // And, when the run has the n8n package's tests, n8n's engine they run (installed once).
    globalSetup: ['test/global-setup.ts', 'packages/n8n-nodes-clinic-api/test/engine/global-setup.mts'],
    projects: [
      {
        ...shared,
        test: {
          ...shared.test,
          name: 'fast',
          // Its files run side by side, at least two at a time: each has its own databases and
          // app, and vitest's default (one fewer than the cores) ran one at a time on the two
          // cores of CI, where this project takes two fifths of the suite's time. It runs first,
          // alone.
          maxWorkers: Math.max(2, availableParallelism() - 1),
          sequence: { groupOrder: 0 },
          // The packages' tests run here too, on the same databases and helpers (npm test builds them first).
          include: ALL_TESTS,
          exclude: [...configDefaults.exclude, ...PROCESS_TEST_GLOBS],
          // About 4x the slowest test (4 s) and hook (5 s: an app on a fresh database per dialect)
          // seen on two cores busy with other suites; slower means something is wrong.
          testTimeout: 15_000,
          hookTimeout: 20_000,
        },
      },
      {
        ...shared,
        test: {
          ...shared.test,
          name: 'processes',
          // One file at a time, after the fast project: these measure how servers, Redis and
          // PostgreSQL behave under load and faults, on timings a second file starting its own
          // processes would disturb (two at a time failed the fleet's shared rate limit: Redis,
          // starved of CPU, missed its timeout and the instances limited alone).
          maxWorkers: 1,
          sequence: { groupOrder: 1 },
          include: PROCESS_TEST_GLOBS,
          // Starting a process (a server on a fresh database, redis-server, a PostgreSQL of its
          // own, Chromium) takes seconds, and a hook may start several: up to 10 s seen on two busy
          // cores. What takes longer still says so where it is (the CLI test's build of dist/,
          // the backup tests' data sets).
          testTimeout: 30_000,
          hookTimeout: 60_000,
        },
      },
    ],
  },
});
