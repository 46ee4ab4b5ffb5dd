// The app: one Fastify instance composed of small named plugins, for the server (server.ts, which
// listens), the tests (app.inject) and the scripts. It never listens itself.
//
//   (options)     server limits and timeouts (http/plugins/connections.ts), parser refusals in
//                 the error shape (http/plugins/client-errors.ts)
//   request-id    X-Request-Id, Cache-Control: no-store, nosniff on every response
//   host-header   400 malformed_request for an HTTP/1.1 request without Host (Node's check is off)
//   access-log    one line per request, no secrets
//   api-errors    the API's one error shape and its 404 (before any route: a route keeps the
//                 error handler in force when it is added)
//   metrics       request counts and latencies; GET /metrics behind METRICS_TOKEN
//   connection-limits  MAX_CONNECTIONS_PER_ADDRESS, requests pipelined on one connection
//   drain         the shutdown's drain: Connection: close, idle connections closed
//   health        GET /livez, GET /readyz (the database answers; 503 while draining)
//   overload      503 service_unavailable past the event-loop delay or memory thresholds
//   method-guard  405 for anything but GET/HEAD on the API's paths, before authentication
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
import type { DestinationStream } from 'pino';
import { databaseErrorKind, isDatabaseError, WriterBusy } from './db/connect.js';
import { frameworkErrors } from './http/error-handler.js';
import { logSerializers } from './http/log.js';
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
import { requestId, requestIdGenerator } from './http/plugins/request-id.js';
import { Metrics } from './metrics.js';
import { ping } from './repos/health.js';
import type { KeyService } from './services/api-keys.js';
import { reportBackgroundError, type BackgroundErrorHandler } from './services/background.js';
import { EventRetention } from './services/event-retention.js';
import type { RateLimiter } from './services/rate-limit.js';
import { PageCache } from './services/page-cache.js';
import { resolvePepper } from './services/pepper.js';
import { RateLimiters, type LimiterHealth } from './services/shared-rate-limit.js';
import { UsageCounter } from './services/usage.js';
import { WebhookService } from './services/webhooks/endpoints.js';
import { DeliveryWorker } from './services/webhooks/worker.js';

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
  /** Where the log lines go (default stdout); tests read them. */
  logStream?: DestinationStream;
  /** Prometheus series; made here (without the process series) when absent. */
  metrics?: Metrics;
  /** How often the overload thresholds are sampled (default 1 s; tests shorten it). */
  overloadSampleIntervalMs?: number;
  /** Per-key API usage counter; made here when absent. Flushed (and stopped) on app close. */
  usage?: UsageCounter;
  /** Dashboard timeouts and sign-in throttles (tests shorten them). */
  admin?: AdminTuning;
  /** Webhook endpoints (runtime.ts makes it with the pepper); made here when absent, with the same pepper. */
  webhooks?: WebhookService;
}

declare module 'fastify' {
  interface FastifyInstance {
    usage: UsageCounter;
    /** Redis' state and the limit decisions made without it: for /readyz and /metrics. */
    limiterHealth: () => LimiterHealth;
    /** A background task failed: logged and counted, never thrown (services/background.ts). */
    reportBackgroundError: BackgroundErrorHandler;
    /** Removes events past EVENT_RETENTION_DAYS in the background once started (server.ts); stopped on close. */
    retention: EventRetention;
    webhooks: WebhookService;
    /** Delivers webhooks once started (server.ts); stopped on close (its leases given up). */
    webhookWorker: DeliveryWorker;
  }
}

/** The pepper the runtime resolved: API_KEY_PEPPER, else the one in DATA_DIR (services/pepper.ts). */
function requiredPepper(config: Config): string {
  return config.apiKeyPepper ?? resolvePepper(config).pepper;
}

/** How long /readyz waits for the database before it counts as down. */
const READINESS_CHECK_TIMEOUT_MS = 2_000;

/** Trust the `hops` proxies nearest to us (Fastify's typings lack the numeric form). */
function trustHops(hops: number) {
  return (_address: string, hop: number) => hop < hops;
}

export async function buildApp(deps: AppDeps): Promise<FastifyInstance> {
  const now = deps.now ?? Date.now;
  const { config } = deps;
  const metrics = deps.metrics ?? new Metrics({ processMetrics: false });
  const app = Fastify({
    logger: deps.logger ?? {
      level: config.logLevel,
      serializers: logSerializers(config.apiKeyPrefix),
      ...(deps.logStream ? { stream: deps.logStream } : {}),
    },
    genReqId: requestIdGenerator(config.apiKeyPrefix),
    requestIdHeader: false,
    logController: new LogController({ disableRequestLogging: true }),
    trustProxy: typeof config.trustProxy === 'number' ? trustHops(config.trustProxy) : config.trustProxy,
    // While closing, requests in flight still get answers in the contract's shape (a closed
    // database is a 500 database_error with Retry-After), not Fastify's own 503 body.
    return503OnClosing: false,
    // The drain (http/plugins/drain.ts) decides which connections to close, and when.
    forceCloseConnections: false,
    frameworkErrors,
    clientErrorHandler: clientErrorHandler(config.http),
    ...serverOptions(config.http),
  });

  const reportBackground: BackgroundErrorHandler = (task, err) => {
    // Another process (an import) holds SQLite's write lock: the write is skipped or deferred
    // by design (services/write-lock.ts), and would otherwise be logged every few seconds.
    if (err instanceof WriterBusy) {
      app.log.debug({ task }, 'background write deferred: another process holds the database write lock');
      return;
    }
    metrics.backgroundFailures.inc({ task });
    if (isDatabaseError(err)) metrics.databaseErrors.inc({ kind: databaseErrorKind(err), source: 'background' });
    app.log.error({ err, task }, 'background task failed');
  };
  app.decorate('reportBackgroundError', reportBackground);

  // Counted by the API, read by the dashboard, written in batches; the rest is written on close.
  const usage = deps.usage ?? new UsageCounter(deps.database.db, { onError: reportBackground });
  app.decorate('usage', usage);
  const limiters = deps.limiters ?? new RateLimiters(null);
  app.decorate('limiterHealth', () => limiters.health());
  app.addHook('onClose', async () => {
    await usage.close().catch((err: unknown) => {
      if (err instanceof WriterBusy)
        app.log.warn({ pending: usage.pending }, 'usage counts not written on close: another process holds the database write lock');
      else reportBackgroundError(reportBackground, 'usage flush on close', err);
    });
  });
  // The change feed's retention: started by the server, stopped (a pass in progress ends) on close.
  const retention = new EventRetention(deps.database, { days: config.eventRetentionDays, now, log: app.log });
  app.decorate('retention', retention);
  app.addHook('onClose', async () => {
    await retention.stop();
  });

  // Webhooks: the endpoints' use-cases for the dashboard, and the delivery worker, started by the
  // server only (tests drive it themselves), stopped on close before the database closes.
  const wh = config.webhooks;
  const webhooks =
    deps.webhooks ??
    new WebhookService(deps.database, {
      pepper: requiredPepper(config),
      apiPlans: config.apiPlans,
      allowPrivate: wh.allowPrivate,
      timeoutMs: wh.timeoutMs,
      now,
    });
  const webhookWorker = new DeliveryWorker(deps.database, webhooks, {
    ...wh,
    now,
    log: app.log,
    observer: {
      attempt: (outcome, lagMs) => {
        metrics.webhookDeliveries.inc({ outcome });
        if (lagMs !== null) metrics.webhookLag.observe(Math.max(0, lagMs) / 1000);
      },
      disabled: () => metrics.webhookDisabled.inc(),
      inFlight: (n) => metrics.webhookInFlight.set(n),
    },
  });
  app.decorate('webhooks', webhooks);
  app.decorate('webhookWorker', webhookWorker);
  app.addHook('onClose', async () => {
    await webhookWorker.stop();
  });

  await app.register(requestId);
  await app.register(hostHeader);
  await app.register(accessLog);
  // Before every route: a route takes the error handler in force when it is added.
  await app.register(apiErrors);
  await app.register(metricsPlugin, { metrics, token: config.metricsToken });
  await app.register(connectionLimits, { maxPerAddress: config.http.maxConnectionsPerAddress });
  await app.register(drain);
  await app.register(health, { checkTimeoutMs: READINESS_CHECK_TIMEOUT_MS });
  app.readiness.add({ name: 'database', critical: true, check: () => ping(deps.database.db) });
  // Redis (REDIS_URL): reported in /readyz, never failing it; its state and fallbacks in /metrics.
  await app.register(limiterHealth, { health: () => limiters.health() });
  await app.register(overload, { limits: config.overload, sampleIntervalMs: deps.overloadSampleIntervalMs });
  await app.register(methodGuard);
  await app.register(compression);
  await app.register(openapi);
  await app.register(docs);
  await app.register(llmsTxtRoute, {
    limits: {
      rps: deps.limiter.rate,
      burst: deps.limiter.burst,
      authFailRps: deps.authFailLimiter.rate,
      authFailBurst: deps.authFailLimiter.burst,
    },
    keyPrefix: config.apiKeyPrefix,
  });
  // Built list pages kept by their ETag (PAGE_CACHE_MB); its counts in /metrics.
  const pages = new PageCache(config.pageCacheBytes);
  await app.register(pageCacheMetrics, { pages });
  await app.register(api, {
    db: deps.database.db,
    keys: deps.keys,
    limiter: deps.limiter,
    authFailLimiter: deps.authFailLimiter,
    usage,
    now,
    pages,
  });
  await app.register(adminPlugin, {
    prefix: '/dashboard',
    db: deps.database.db,
    keys: deps.keys,
    webhooks,
    usage,
    config,
    now,
    cookieSecure: config.cookieSecure,
    limiters,
    ...deps.admin,
  });
  await app.register(rootRedirect);
  return app;
}
