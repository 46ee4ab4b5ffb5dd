// Composition shared by the server and the CLI: config -> database (migrated) -> services, and
// with REDIS_URL the link to Redis (redis/link.ts), which connects only when first used: the
// server starts it, the CLI only when it announces a revocation.
// Migrations run under the database's start-up lock (db/connect.ts), so instances and commands
// starting at once on one database apply each migration once.
import type { Config } from './config.js';
import { describeTarget, openDatabase, targetFromConfig, type Database } from './db/connect.js';
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
): Promise<{ database: Database; value: T }> {
  let database: Database | undefined;
  try {
    database = await openDatabase(targetFromConfig(config), { onConnectionError });
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
}

export async function openRuntime(config: Config, opts: RuntimeOptions = {}): Promise<Runtime> {
  const target = targetFromConfig(config);
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
  const { database } = await openAnd(
    config,
    async (d) => {
      if (opts.migrate !== false) await d.exclusive(() => migrateToLatest(d));
    },
    opts.onConnectionError,
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
