// Composition shared by the server and the CLI: config -> database (migrated) -> services.
// Migrations run under the database's start-up lock (db/connect.ts), so instances and commands
// starting at once on one database apply each migration once.
import type { Config } from './config.js';
import { describeTarget, openDatabase, targetFromConfig, type Database } from './db/connect.js';
import { migrateToLatest } from './db/migrate.js';
import { KeyService } from './services/api-keys.js';
import type { BackgroundErrorHandler } from './services/background.js';
import { resolvePepper } from './services/pepper.js';

export interface Runtime {
  config: Config;
  database: Database;
  keys: KeyService;
  pepperGenerated: boolean;
  describe: string;
  close(): Promise<void>;
}

/** Applies the database's pending migrations (idempotent); the names of those applied now. */
export async function migrateDatabase(config: Config): Promise<string[]> {
  const database = await openDatabase(targetFromConfig(config));
  try {
    return await database.exclusive(() => migrateToLatest(database));
  } finally {
    await database.close();
  }
}

export interface RuntimeOptions {
  migrate?: boolean;
  onBackgroundError?: BackgroundErrorHandler;
  /** A pooled PostgreSQL connection failed outside any query (the pool replaces it). */
  onConnectionError?: (err: Error) => void;
}

export async function openRuntime(config: Config, opts: RuntimeOptions = {}): Promise<Runtime> {
  const target = targetFromConfig(config);
  const { pepper, generated } = resolvePepper(config);
  const database = await openDatabase(target, { onConnectionError: opts.onConnectionError });
  try {
    if (opts.migrate !== false) await database.exclusive(() => migrateToLatest(database));
  } catch (err) {
    await database.close();
    throw err;
  }
  const keys = new KeyService(database.db, {
    pepper, prefix: config.apiKeyPrefix, apiPlans: config.apiPlans, onBackgroundError: opts.onBackgroundError,
  });
  return { config, database, keys, pepperGenerated: generated, describe: describeTarget(target), close: () => database.close() };
}
