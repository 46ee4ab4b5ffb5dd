// The app: one Fastify instance composed of small named plugins, for the server (server.ts, which
// listens), the tests (app.inject) and the scripts. It never listens itself.
//
//   request-id    X-Request-Id, Cache-Control: no-store, nosniff on every response
//   access-log    one line per request, no secrets
//   method-guard  405 for anything but GET/HEAD on the API's paths, before authentication
//   api-errors    the API's one error shape and its 404
//   compression   gzip/br
//   openapi       the OpenAPI document, from the route schemas (before the routes)
//   docs          /docs: the interactive API reference (Swagger UI, this origin only), /docs/license
//   llms-txt      /llms.txt: the API summarised for AI tools, from the OpenAPI document
//   api           /api/v1: API-key auth, rate limits, strict validation, the three listings and /me
//   admin         /dashboard: its own sessions, CSRF, HTML pages; never API keys
//   root          / redirects to /dashboard
import Fastify, { LogController, type FastifyInstance, type FastifyServerOptions } from 'fastify';
import { adminPlugin, type AdminTuning } from './admin/index.js';
import { rootRedirect } from './admin/root.js';
import type { Config } from './config.js';
import type { Database } from './db/connect.js';
import { frameworkErrors } from './http/error-handler.js';
import { logSerializers } from './http/log.js';
import { accessLog } from './http/plugins/access-log.js';
import { apiErrors } from './http/plugins/api-errors.js';
import { api } from './http/plugins/api.js';
import { compression } from './http/plugins/compression.js';
import { docs } from './http/plugins/docs.js';
import { llmsTxtRoute } from './http/plugins/llms-txt.js';
import { methodGuard } from './http/plugins/method-guard.js';
import { openapi } from './http/plugins/openapi.js';
import { genReqId, requestId } from './http/plugins/request-id.js';
import type { KeyService } from './services/api-keys.js';
import type { RateLimiter } from './services/rate-limit.js';
import { RateLimiters, type LimiterHealth } from './services/shared-rate-limit.js';
import { UsageCounter } from './services/usage.js';

export interface AppDeps {
  config: Config;
  database: Database;
  keys: KeyService;
  limiter: RateLimiter;
  authFailLimiter: RateLimiter;
  /**
   * Where the dashboard's sign-in limiters are made and the limiters' health is read (in memory
   * when absent; the server passes the runtime's, shared on Redis with REDIS_URL).
   */
  limiters?: RateLimiters;
  /** Wall clock in ms; tests pass a fixed one. */
  now?: () => number;
  /** Logger options; false silences (tests). */
  logger?: FastifyServerOptions['logger'];
  /** Per-key API usage counter; made here when absent. Flushed (and stopped) on app close. */
  usage?: UsageCounter;
  /** Dashboard timeouts and sign-in throttles (tests shorten them). */
  admin?: AdminTuning;
}

declare module 'fastify' {
  interface FastifyInstance {
    usage: UsageCounter;
    /** Redis' state and the limit decisions made without it: for /readyz and /metrics. */
    limiterHealth: () => LimiterHealth;
  }
}

/** Trust the `hops` proxies nearest to us (Fastify's typings lack the numeric form). */
function trustHops(hops: number) {
  return (_address: string, hop: number) => hop < hops;
}

export async function buildApp(deps: AppDeps): Promise<FastifyInstance> {
  const now = deps.now ?? Date.now;
  const { config } = deps;
  const app = Fastify({
    logger: deps.logger ?? { level: config.logLevel, serializers: logSerializers },
    genReqId,
    requestIdHeader: false,
    logController: new LogController({ disableRequestLogging: true }),
    trustProxy: typeof config.trustProxy === 'number' ? trustHops(config.trustProxy) : config.trustProxy,
    // While closing, requests in flight still get answers in the contract's shape (a closed
    // database is a 500 database_error with Retry-After), not Fastify's own 503 body.
    return503OnClosing: false,
    frameworkErrors,
  });

  // Counted by the API, read by the dashboard, written in batches; the rest is written on close.
  const usage = deps.usage ?? new UsageCounter(deps.database.db, { onError: (err) => app.log.error({ err }, 'usage flush failed') });
  app.decorate('usage', usage);
  const limiters = deps.limiters ?? new RateLimiters(null);
  app.decorate('limiterHealth', () => limiters.health());
  app.addHook('onClose', async () => {
    await usage.close().catch((err) => app.log.error({ err }, 'usage flush on close failed'));
  });

  await app.register(requestId);
  await app.register(accessLog);
  await app.register(methodGuard);
  await app.register(apiErrors);
  await app.register(compression);
  await app.register(openapi);
  await app.register(docs);
  await app.register(llmsTxtRoute, {
    limits: { rps: deps.limiter.rate, burst: deps.limiter.burst, authFailRps: deps.authFailLimiter.rate, authFailBurst: deps.authFailLimiter.burst },
    keyPrefix: config.apiKeyPrefix,
  });
  await app.register(api, { db: deps.database.db, keys: deps.keys, limiter: deps.limiter, authFailLimiter: deps.authFailLimiter, usage, now });
  await app.register(adminPlugin, {
    prefix: '/dashboard', db: deps.database.db, keys: deps.keys, usage, config, now, cookieSecure: config.cookieSecure, limiters, ...deps.admin,
  });
  await app.register(rootRedirect);
  return app;
}
