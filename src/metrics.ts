// The process's Prometheus metrics (prom-client), one registry per app so that tests can run
// several apps in one process. Served by http/plugins/metrics.ts at GET /metrics behind
// METRICS_TOKEN; the series are listed in docs/operations.md.
//
// Extension point: a later part registers its own series on `registry`, where its code lives
// (e.g. the Redis rate-limit backend's `rate_limit_fallbacks_total` and `redis_up` in
// http/plugins/limiter-health.ts; to come: the webhook sender
// `webhook_deliveries_total{outcome}`, the event feed `event_feed_lag_seconds`), via
// `new Counter({ name, help, registers: [metrics.registry] })`, and adds it to the list in
// docs/operations.md. Names are snake_case with the unit last (_seconds, _bytes, _total).
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';

export type DatabaseErrorSource = 'request' | 'background' | 'pool';

export interface MetricsOptions {
  /** Process series (CPU, memory, event-loop delay, GC). Off in most tests: each set runs its own sampler. */
  processMetrics?: boolean;
}

/** Seconds; from a fast cached page to the statement timeout. */
const LATENCY_BUCKETS = [0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

export class Metrics {
  readonly registry = new Registry();

  readonly httpRequests = new Counter({
    name: 'http_requests_total',
    help: 'HTTP responses by route (the route pattern; "unmatched" for 404s), method and status',
    labelNames: ['route', 'method', 'status'] as const,
    registers: [this.registry],
  });

  readonly httpDuration = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'Time from the request to its response, by route and method',
    labelNames: ['route', 'method'] as const,
    buckets: LATENCY_BUCKETS,
    registers: [this.registry],
  });

  readonly httpInFlight = new Gauge({
    name: 'http_requests_in_flight',
    help: 'Requests received and not yet answered (or abandoned)',
    registers: [this.registry],
  });

  readonly clientErrors = new Counter({
    name: 'http_client_errors_total',
    help: 'Requests refused before routing: unparseable (parse), headers too large (header_overflow), too slow (timeout)',
    labelNames: ['reason'] as const,
    registers: [this.registry],
  });

  readonly connectionsClosed = new Counter({
    name: 'http_connections_closed_total',
    help:
      'Connections the server closed on its own: per_address (MAX_CONNECTIONS_PER_ADDRESS open already), pipelining (too many ' +
      'requests waiting on one connection), stalled (nothing moved for SOCKET_TIMEOUT_MS mid-request or mid-response)',
    labelNames: ['reason'] as const,
    registers: [this.registry],
  });

  readonly rateLimited = new Counter({
    name: 'rate_limited_total',
    help: 'Requests answered 429, by the limit that refused them (key: per API key; auth_failures: per address)',
    labelNames: ['limit'] as const,
    registers: [this.registry],
  });

  readonly overloaded = new Counter({
    name: 'overload_rejections_total',
    help: 'Requests answered 503 service_unavailable because the process was over a threshold',
    labelNames: ['reason'] as const,
    registers: [this.registry],
  });

  readonly databaseErrors = new Counter({
    name: 'database_errors_total',
    help:
      'Database failures by kind (timeout, connection, query) and where they surfaced (request: answered database_error; background; ' +
      'pool: a pooled connection lost)',
    labelNames: ['kind', 'source'] as const,
    registers: [this.registry],
  });

  readonly backgroundFailures = new Counter({
    name: 'background_task_failures_total',
    help: 'Background tasks that failed (logged, retried later), by task',
    labelNames: ['task'] as const,
    registers: [this.registry],
  });

  readonly webhookDeliveries = new Counter({
    name: 'webhook_deliveries_total',
    help: 'Webhook delivery attempts of the worker, by outcome (delivered: a 2xx; failed: anything else, retried later)',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });

  readonly webhookLag = new Histogram({
    name: 'webhook_delivery_lag_seconds',
    help: 'From an event (its ocurrido_at, whole seconds) to its delivery (the 2xx), retries included',
    buckets: [0.25, 0.5, 1, 2, 5, 10, 30, 60, 300, 3600, 86_400],
    registers: [this.registry],
  });

  readonly webhookInFlight = new Gauge({
    name: 'webhook_deliveries_in_flight',
    help: 'Endpoints this process is delivering to right now (at most WEBHOOK_MAX_IN_FLIGHT)',
    registers: [this.registry],
  });

  readonly webhookDisabled = new Counter({
    name: 'webhook_endpoints_disabled_total',
    help: 'Endpoints this process disabled after 3 days of failed deliveries',
    registers: [this.registry],
  });

  readonly requestLogWritten = new Counter({
    name: 'request_log_entries_written_total',
    help: 'Request log entries this process wrote (REQUEST_LOG_DAYS above 0)',
    registers: [this.registry],
  });

  readonly requestLogDropped = new Counter({
    name: 'request_log_entries_dropped_total',
    help: 'Request log entries dropped because too many were waiting to be written (the database slow or locked)',
    registers: [this.registry],
  });

  readonly requestLogPending = new Gauge({
    name: 'request_log_entries_pending',
    help: 'Request log entries collected and not yet written (after the last write)',
    registers: [this.registry],
  });

  constructor(opts: MetricsOptions = {}) {
    // nodejs_eventloop_lag_*_seconds, process_resident_memory_bytes, nodejs_heap_*, GC, handles.
    if (opts.processMetrics !== false) collectDefaultMetrics({ register: this.registry, eventLoopMonitoringPrecision: 10 });
  }
}
