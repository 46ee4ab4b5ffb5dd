// Composition shared by the server and the CLI: config -> database (migrated) -> services, and
// with REDIS_URL the link to Redis (redis/link.ts), which connects only when first used: the
// server starts it, the CLI only when it announces a revocation.
// Migrations run under the database's start-up lock (db/connect.ts), so instances and commands
// starting at once on one database apply each migration once.
import type { Config } from './config.js';
import { COMMAND_BUSY_TIMEOUT_MS, describeTarget, openDatabase, targetFromConfig, type Database } from './db/connect.js';
import { migrateToLatest } from './db/migrate.js';
import type { RedisLink, RedisState } from './redis/link.js';
import { KeyService } from './services/api-keys.js';
import type { BackgroundErrorHandler } from './services/background.js';
import { resolvePepper } from './services/pepper.js';
import { WebhookService } from './services/webhooks/endpoints.js';
import { revocationAnnouncer } from './services/revocations.js';
import { RateLimiters } from './services/shared-rate-limit.js';
import { explainPepperError, explainRuntimeError } from './startup-errors.js';

export interface Runtime {
  config: Config;
  database: Database;
  keys: KeyService;
  webhooks: WebhookService;
  /** null without REDIS_URL */
  redis: RedisLink | null;
  /** the rate limiters: in memory, or shared on `redis` (failing open to memory) */
  limiters: RateLimiters;
  pepperGenerated: boolean;
  describe: string;
  close(): Promise<void>;
}

/**
 * Opens the database and runs `first` on it (migrations); closes it again if that fails. An
 * unreachable database or an unwritable DATA_DIR comes out as an error naming the variable.
 */
async function openAnd<T>(
  config: Config,
  first: (database: Database) => Promise<T>,
  onConnectionError?: (err: Error) => void,
  busyTimeoutMs = COMMAND_BUSY_TIMEOUT_MS,
): Promise<{ database: Database; value: T }> {
  let database: Database | undefined;
  try {
    database = await openDatabase(targetFromConfig(config, busyTimeoutMs), { onConnectionError });
    return { database, value: await first(database) };
  } catch (err) {
    await database?.close().catch(() => {});
    throw explainRuntimeError(err, config);
  }
}

/** Applies the database's pending migrations (idempotent); the names of those applied now. */
export async function migrateDatabase(config: Config): Promise<string[]> {
  const { database, value } = await openAnd(config, (d) => d.exclusive(() => migrateToLatest(d)));
  await database.close();
  return value;
}

export interface RuntimeOptions {
  migrate?: boolean;
  onBackgroundError?: BackgroundErrorHandler;
  /** A pooled PostgreSQL connection failed outside any query (the pool replaces it). */
  onConnectionError?: (err: Error) => void;
  /** Redis went down (with the reason) or answers again: for the server's log, once per change. */
  onRedisState?: (state: RedisState, reason: string | null) => void;
  /**
   * The server's runtime: SQLite never waits for its write lock inside a statement (that wait
   * stops the event loop); each write waits asynchronously instead (services/write-lock.ts).
   * Commands keep SQLite's own wait (COMMAND_BUSY_TIMEOUT_MS): nothing else runs in them.
   */
  server?: boolean;
}

export async function openRuntime(config: Config, opts: RuntimeOptions = {}): Promise<Runtime> {
  const busyTimeoutMs = opts.server ? 0 : COMMAND_BUSY_TIMEOUT_MS;
  const target = targetFromConfig(config, busyTimeoutMs);
  let resolved: ReturnType<typeof resolvePepper>;
  try {
    resolved = resolvePepper(config);
  } catch (err) {
    throw explainPepperError(err, config);
  }
  const { pepper, generated } = resolved;
  // node-redis takes about 0.2 s to load: only a process with REDIS_URL loads it (every CLI
  // command opens a runtime).
  const link = config.redisUrl === null ? null : await import('./redis/link.js');
  // The server's SQLite connection never waits for the write lock inside a statement, and a
  // migration refused midway would be left half applied: migrations run first, before the server
  // listens, on a connection of their own that waits for the lock as commands do.
  const migrateFirst = opts.migrate !== false && opts.server === true && target.kind === 'sqlite';
  if (migrateFirst) await migrateDatabase(config);
  const { database } = await openAnd(
    config,
    async (d) => {
      if (opts.migrate !== false && !migrateFirst) await d.exclusive(() => migrateToLatest(d));
    },
    opts.onConnectionError,
    busyTimeoutMs,
  );
  const redis =
    link === null || config.redisUrl === null
      ? null
      : new link.RedisLink({ url: config.redisUrl, timeoutMs: config.redisTimeoutMs, onStateChange: opts.onRedisState });
  const keys = new KeyService(database.db, {
    pepper,
    prefix: config.apiKeyPrefix,
    apiPlans: config.apiPlans,
    onBackgroundError: opts.onBackgroundError,
    announceRevocation: redis ? revocationAnnouncer(redis) : undefined,
  });
  const webhooks = new WebhookService(database, {
    pepper,
    apiPlans: config.apiPlans,
    allowPrivate: config.webhooks.allowPrivate,
    timeoutMs: config.webhooks.timeoutMs,
  });
  const limiters = new RateLimiters(redis);
  return {
    config,
    database,
    keys,
    webhooks,
    redis,
    limiters,
    pepperGenerated: generated,
    describe: describeTarget(target),
    close: async () => {
      limiters.stop();
      await redis?.close();
      await database.close();
    },
  };
}
