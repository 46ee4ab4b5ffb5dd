// The app: one Fastify instance composed of small named plugins, for the server (server.ts, which
// listens), the tests (app.inject) and the scripts. It never listens itself, and makes no
// service: it wires those of its runtime (runtime.ts, the composition root) to the plugins.
//
//   (options)     server limits and timeouts (http/plugins/connections.ts), parser refusals in
//                 the error shape (http/plugins/client-errors.ts)
//   request-id    X-Request-Id, Cache-Control: no-store, nosniff on every response
//   host-header   400 malformed_request for an HTTP/1.1 request without Host (Node's check is off)
//   access-log    one line per request, no secrets
//   api-errors    the API's one error shape and its 404 (before any route: a route keeps the
//                 error handler in force when it is added)
//   metrics       request counts and latencies; GET /metrics behind METRICS_TOKEN
//   drain         the shutdown's drain: accepting first, Connection: close, idle connections closed
//   connection-limits  MAX_CONNECTIONS_PER_ADDRESS (not while draining), requests pipelined on one connection
//   health        GET /livez, GET /readyz (the database answers; 503 while draining)
//   overload      503 service_unavailable past the event-loop delay or memory thresholds
//   method-guard  405 for anything but GET/HEAD on the API's paths, before authentication
//   compression   gzip/br
//   openapi       the OpenAPI document, from the route schemas (before the routes)
//   docs          /docs: the interactive API reference (Swagger UI, this origin only), /docs/license
//   llms-txt      /llms.txt: the API summarised for AI tools, from the OpenAPI document
//   api           /api/v1: API-key auth, rate limits, strict validation, the three listings and /me
//   oauth         (OAUTH_ISSUER set) the OAuth authorization server under /oauth, its metadata and
//                 the protected resources' metadata under /.well-known
//   admin         /dashboard: its own sessions, CSRF, HTML pages; never API keys
//   root          / redirects to /dashboard
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import { adminPlugin, type AdminTuning } from './admin/index.js';
import { rootRedirect } from './admin/root.js';
import type { Config } from './config.js';
import { frameworkErrors } from './http/error-handler.js';
import { accessLog } from './http/plugins/access-log.js';
import { apiErrors } from './http/plugins/api-errors.js';
import { api } from './http/plugins/api.js';
import { clientErrorHandler } from './http/plugins/client-errors.js';
import { compression } from './http/plugins/compression.js';
import { docs } from './http/plugins/docs.js';
import { llmsTxtRoute } from './http/plugins/llms-txt.js';
import { connectionLimits, serverOptions } from './http/plugins/connections.js';
import { drain } from './http/plugins/drain.js';
import { health } from './http/plugins/health.js';
import { hostHeader } from './http/plugins/host-header.js';
import { limiterHealth } from './http/plugins/limiter-health.js';
import { methodGuard } from './http/plugins/method-guard.js';
import { metricsPlugin } from './http/plugins/metrics.js';
import { pageCacheMetrics } from './http/plugins/page-cache-metrics.js';
import { openapi } from './http/plugins/openapi.js';
import { overload } from './http/plugins/overload.js';
import { oauthRoutes } from './http/oauth/mount.js';
import { requestId, requestIdGenerator } from './http/plugins/request-id.js';
import { ping } from './repos/health.js';
import type { BackgroundErrorHandler } from './services/background.js';
import type { LimiterHealth } from './services/shared-rate-limit.js';
import type { UsageCounter } from './services/usage.js';
import type { WebhookService } from './services/webhooks/endpoints.js';
import type { DeliveryWorker } from './services/webhooks/worker.js';
import type { Runtime } from './runtime.js';

/** What may differ between apps on one runtime: tuning that tests shorten. */
export interface AppOptions {
  /** How often the overload thresholds are sampled (default 1 s; tests shorten it). */
  overloadSampleIntervalMs?: number;
  /** Dashboard timeouts and sign-in throttles (tests shorten them). */
  admin?: AdminTuning;
}

declare module 'fastify' {
  interface FastifyInstance {
    usage: UsageCounter;
    /** Redis' state and the limit decisions made without it: for /readyz and /metrics. */
    limiterHealth: () => LimiterHealth;
    /** A background task failed: logged and counted, never thrown (services/background.ts). */
    reportBackgroundError: BackgroundErrorHandler;
    webhooks: WebhookService;
    /** The runtime's webhook delivery worker (started and stopped by the runtime; tests drive it). */
    webhookWorker: DeliveryWorker;
  }
}

/** How long /readyz waits for the database before it counts as down. */
const READINESS_CHECK_TIMEOUT_MS = 2_000;

/** TRUST_PROXY as Fastify takes it; a hop count as a function (Fastify's typings lack the numeric form). */
function trustSetting(trust: Config['trustProxy']) {
  if (typeof trust === 'number') return (_address: string, hop: number) => hop < trust;
  return typeof trust === 'boolean' ? trust : [...trust];
}

/**
 * The app on `rt`'s services: the runtime made each of them once; the app only wires them to its
 * plugins. One app per runtime (its sign-in throttles are made on the runtime's limiter store,
 * once); a second instance on the same database is a second runtime (composeRuntime). Its log is
 * a child of the runtime's logger. Closing the app stops nothing of its runtime's: the
 * runtime's close() stops the background work, writes the pending usage counts and the request
 * log, then closes Redis and the database.
 */
export async function buildApp(rt: Runtime, opts: AppOptions = {}): Promise<FastifyInstance> {
  const { config, now, metrics, usage } = rt;
  const limiters = await rt.limiters();
  const app = Fastify({
    // Typed as Fastify's own logger interface, which pino's implements.
    loggerInstance: rt.log as FastifyBaseLogger,
    genReqId: requestIdGenerator(config.apiKeyPrefix),
    requestIdHeader: false,
    logController: new LogController({ disableRequestLogging: true }),
    trustProxy: trustSetting(config.trustProxy),
    // While closing, requests in flight still get answers in the contract's shape (a closed
    // database is a 500 database_error with Retry-After), not Fastify's own 503 body.
    return503OnClosing: false,
    // The drain (http/plugins/drain.ts) decides which connections to close, and when.
    forceCloseConnections: false,
    frameworkErrors,
    clientErrorHandler: clientErrorHandler(config.http),
    ...serverOptions(config.http),
  });

  app.decorate('reportBackgroundError', rt.reportBackgroundError);
  // Counted by the API, read by the dashboard, written in batches by the runtime.
  app.decorate('usage', usage);
  app.decorate('limiterHealth', () => limiters.factory.health());
  // Webhooks: the endpoints' use-cases for the dashboard, and the runtime's delivery worker.
  app.decorate('webhooks', rt.webhooks);
  app.decorate('webhookWorker', rt.deliveryWorker);

  await app.register(requestId);
  await app.register(hostHeader);
  await app.register(accessLog);
  // Before every route: a route takes the error handler in force when it is added.
  await app.register(apiErrors);
  await app.register(metricsPlugin, { metrics, token: config.metricsToken });
  await app.register(drain);
  await app.register(connectionLimits, { maxPerAddress: config.http.maxConnectionsPerAddress });
  await app.register(health, { checkTimeoutMs: READINESS_CHECK_TIMEOUT_MS });
  app.readiness.add({ name: 'database', critical: true, check: () => ping(rt.database.db) });
  // Redis (REDIS_URL): reported in /readyz, never failing it; its state and fallbacks in /metrics.
  await app.register(limiterHealth, { health: () => limiters.factory.health() });
  await app.register(overload, { limits: config.overload, sampleIntervalMs: opts.overloadSampleIntervalMs });
  await app.register(methodGuard);
  await app.register(compression);
  await app.register(openapi, { oauthIssuer: config.oauth.issuer });
  await app.register(docs);
  await app.register(llmsTxtRoute, {
    limits: {
      rps: limiters.api.rate,
      burst: limiters.api.burst,
      authFailRps: limiters.authFail.rate,
      authFailBurst: limiters.authFail.burst,
    },
    keyPrefix: config.apiKeyPrefix,
  });
  // Built list pages kept by their ETag (PAGE_CACHE_MB); its counts in /metrics.
  await app.register(pageCacheMetrics, { pages: rt.pages });
  const oauth = await rt.oauthServer();
  await app.register(api, {
    db: rt.database.db,
    keys: rt.keys,
    limiter: limiters.api,
    authFailLimiter: limiters.authFail,
    usage,
    now,
    pages: rt.pages,
    search: rt.clientasSearch,
    oauth: oauth ? { tokens: rt.appTokens, resources: oauth.resources } : null,
    requestLog: rt.requestLog,
  });
  if (oauth) {
    await app.register(oauthRoutes, {
      server: oauth,
      registrationLimiter: limiters.oauthRegistration,
      authorizationLimiter: limiters.oauthAuthorization,
      tokenLimiter: limiters.oauthToken,
      now,
    });
  }
  await app.register(adminPlugin, {
    prefix: '/dashboard',
    db: rt.database.db,
    keys: rt.keys,
    appGrants: rt.appGrants,
    oauth,
    webhooks: rt.webhooks,
    usage,
    sessions: rt.sessions,
    clientasSearch: rt.clientasSearch,
    exports: rt.exports,
    sandboxes: rt.sandboxes,
    config,
    now,
    cookieSecure: config.cookieSecure,
    limiters: limiters.factory,
    ...opts.admin,
  });
  await app.register(rootRedirect);
  return app;
}
