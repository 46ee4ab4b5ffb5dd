// The real app on a database that the test opens itself (its own pool size, statement timeout or
// URL), for failures that test/helpers/app.ts's shared set-up cannot produce.
import { randomBytes } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import type { Database, DatabaseTarget } from '../../src/db/connect.js';
import { createClinic } from '../../src/services/accounts.js';
import { appFor, seedRecords } from '../helpers/app.js';
import { newPgDatabaseUrl } from '../helpers/db.js';
import { clinicARecords } from '../helpers/fixtures.js';
import { testRuntime } from '../helpers/runtime.js';

export { newPgDatabaseUrl };

/** Where a failure test opens its own database: SQLite in memory, or a new PostgreSQL database. */
export async function ownTarget(dialect: 'sqlite' | 'postgres'): Promise<DatabaseTarget> {
  return dialect === 'sqlite'
    ? { kind: 'sqlite', file: ':memory:' }
    : { kind: 'postgres', url: await newPgDatabaseUrl(), poolMax: 2, statementTimeoutMs: 5_000 };
}

export interface OwnApp {
  app: FastifyInstance;
  database: Database;
  key: string;
  close(): Promise<void>;
}

/**
 * The test runtime on `target`, migrated, with clinic A's fixtures and a key, and the app on it.
 * `prepare: false` touches nothing (e.g. a database that is unreachable): no migration, and the
 * key is well-formed but unknown.
 */
export async function appOn(target: DatabaseTarget, opts: { prepare?: boolean } = {}): Promise<OwnApp> {
  const prepare = opts.prepare !== false;
  const rt = await testRuntime(target.kind, { target, migrate: prepare });
  let key = `${rt.config.apiKeyPrefix}_${randomBytes(32).toString('base64url')}`;
  if (prepare) {
    const clinic = await createClinic(
      rt.database.db,
      { name: 'Clínica Uno', timezone: 'Europe/Madrid', currency: 'EUR', plan: 'premium' },
      rt.now(),
    );
    await seedRecords(rt.database, clinic, clinicARecords());
    key = (await rt.keys.create({ clinicId: clinic.id, name: 'A', expiresAt: null, createdBy: null })).key;
  }
  const app = await appFor(rt);
  return {
    app,
    database: rt.database,
    key,
    close: async () => {
      await app.close().catch(() => {});
      await rt.close().catch(() => {});
    },
  };
}
