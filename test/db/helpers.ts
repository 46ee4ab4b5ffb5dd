// The real app on a database that the test opens itself (its own pool size, statement timeout or
// URL), for failures that test/helpers/app.ts's shared set-up cannot produce.
import { randomBytes } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { loadConfig } from '../../src/config.js';
import { openDatabase, type Database, type DatabaseTarget } from '../../src/db/connect.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { createClinic } from '../../src/services/accounts.js';
import { KeyService } from '../../src/services/api-keys.js';
import { appFor, seedRecords, TEST_ENV, TEST_PEPPER } from '../helpers/app.js';
import { newPgDatabaseUrl } from '../helpers/db.js';
import { clinicARecords, FIXTURE_NOW_MS } from '../helpers/fixtures.js';

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
 * Migrates `target`, seeds clinic A's fixtures, issues a key and builds the app on it.
 * `prepare: false` builds the app without touching the database (e.g. one that is unreachable);
 * the key is then well-formed but unknown.
 */
export async function appOn(target: DatabaseTarget, opts: { prepare?: boolean } = {}): Promise<OwnApp> {
  const config = loadConfig({ ...TEST_ENV });
  const database = await openDatabase(target);
  const now = () => FIXTURE_NOW_MS;
  const keys = new KeyService(database.db, { pepper: TEST_PEPPER, prefix: config.apiKeyPrefix, apiPlans: config.apiPlans, now });
  let key = `${config.apiKeyPrefix}_${randomBytes(32).toString('base64url')}`;
  if (opts.prepare !== false) {
    await migrateToLatest(database);
    const clinic = await createClinic(
      database.db,
      { name: 'Clínica Uno', timezone: 'Europe/Madrid', currency: 'EUR', plan: 'premium' },
      now(),
    );
    await seedRecords(database, clinic, clinicARecords());
    key = (await keys.create({ clinicId: clinic.id, name: 'A', expiresAt: null, createdBy: null })).key;
  }
  const app = await appFor(config, database, keys, now);
  return {
    app,
    database,
    key,
    close: async () => {
      await app.close().catch(() => {});
      await database.close().catch(() => {});
    },
  };
}
