// A real redis-server for the tests that need one (tools/redis-server.ts). When the machine has
// none, those tests are skipped, and say so on stdout: never silently.
import { findRedisServer, startRedisServer, type RedisServer } from '../../tools/redis-server.js';

export type { RedisServer };

export const HAS_REDIS = findRedisServer() !== null;

/** Prints why `what` is skipped when there is no redis-server; returns whether it can run. */
export function redisAvailable(what: string): boolean {
  if (!HAS_REDIS) {
    process.stdout.write(
      `SKIPPED ${what}: redis-server is not installed (Debian: apt-get install redis-server; or set REDIS_SERVER to its path)\n`,
    );
  }
  return HAS_REDIS;
}

export function startRedis(): Promise<RedisServer> {
  return startRedisServer();
}
