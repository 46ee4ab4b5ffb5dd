// The only reader of process.env. loadConfig() validates every variable up front and names the
// bad one, so a mistyped deployment fails at start-up instead of misbehaving later.
import path from 'node:path';
import { PLANS, type Plan } from './domain/records.js';
import { DomainError } from './errors.js';

export interface Config {
  readonly port: number;
  readonly host: string;
  readonly dataDir: string;
  readonly databaseUrl: string | null;
  readonly apiKeyPrefix: string;
  /** null: generated into / read from DATA_DIR by resolvePepper(). */
  readonly apiKeyPepper: string | null;
  readonly rateLimitRps: number;
  readonly rateLimitBurst: number;
  readonly authFailRps: number;
  readonly authFailBurst: number;
  readonly apiPlans: readonly Plan[];
  readonly logLevel: string;
  /** Fastify's trustProxy: false, true (every hop), a hop count, or trusted addresses/CIDRs. */
  readonly trustProxy: boolean | number | string[];
  /** Dashboard session cookie Secure flag: auto (when the request is HTTPS), always, never. */
  readonly cookieSecure: 'auto' | 'always' | 'never';
  readonly dbPoolMax: number;
  readonly dbStatementTimeoutMs: number;
  /** null: limits in each process's memory; set: shared by every instance on this Redis. */
  readonly redisUrl: string | null;
  /** How long a request waits for Redis before its limit is decided in memory (fail open). */
  readonly redisTimeoutMs: number;
  /** How long to wait for a PostgreSQL connection, new or from the pool. */
  readonly dbConnectTimeoutMs: number;
  /** How often the dashboard's API usage counts are written. */
  readonly usageFlushIntervalS: number;
  /** A graceful shutdown that takes longer exits anyway (code 1). */
  readonly shutdownTimeoutS: number;
  readonly http: HttpLimits;
  readonly overload: OverloadLimits;
  /** Bearer token of GET /metrics; null: /metrics is a 404. */
  readonly metricsToken: string | null;
  /** Days the change feed keeps its events (at least 30). */
  readonly eventRetentionDays: number;
  /** Webhook deliveries (docs/webhooks.md, "Configuration"). */
  readonly webhooks: WebhookConfig;
  /** Bytes of built list pages kept by their ETag (services/page-cache.ts); 0: none. */
  readonly pageCacheBytes: number;
}

export interface WebhookConfig {
  /** WEBHOOK_ALLOW_PRIVATE: private/loopback destinations and plain http:// allowed (tests, private networks). */
  readonly allowPrivate: boolean;
  /** deliveries in flight per server process at most (one per endpoint always) */
  readonly maxInFlight: number;
  /** the first retry's back-off ceiling; doubles per attempt up to retryMaxMs (full jitter) */
  readonly retryBaseMs: number;
  readonly retryMaxMs: number;
  /** a delivery attempt's total time limit (10 s; lower only in tests) */
  readonly timeoutMs: number;
  /** how long a claimed endpoint stays this process's; renewed at every attempt */
  readonly leaseMs: number;
  /** how often the worker looks for due endpoints (PostgreSQL also wakes it at each import's commit) */
  readonly pollMs: number;
}

/** Timeouts and caps against slow and greedy clients (docs/operations.md). */
export interface HttpLimits {
  /** the request line and headers must arrive within this */
  readonly headersTimeoutMs: number;
  /** the whole request, body included, must arrive within this */
  readonly requestTimeoutMs: number;
  /** an idle keep-alive connection is closed after this */
  readonly keepAliveTimeoutMs: number;
  /** a connection on which nothing moves either way for this long is closed (e.g. a client that does not read) */
  readonly socketTimeoutMs: number;
  /** open connections per client address (the TCP peer); 0: no cap */
  readonly maxConnectionsPerAddress: number;
  /** request line plus headers */
  readonly maxHeaderBytes: number;
}

/** Past either threshold, requests are refused with 503 service_unavailable (0: not checked). */
export interface OverloadLimits {
  readonly maxEventLoopDelayMs: number;
  /** null: 90% of the V8 heap limit, resolved at start */
  readonly maxHeapUsedBytes: number | null;
  readonly maxRssBytes: number;
}

/** An invalid variable: reason invalid_config, the variable as the field, named in the message. */
function invalid(variable: string, message: string): DomainError {
  return new DomainError('invalid_config', `${variable}: ${message}`, { field: variable });
}

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

type Env = Record<string, string | undefined>;

function int(env: Env, name: string, def: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return def;
  if (!/^\d+$/.test(raw.trim()) || Number(raw) < min || Number(raw) > max) {
    throw invalid(name, `must be a whole number from ${min} to ${max}, got "${raw}"`);
  }
  return Number(raw);
}

function bool(env: Env, name: string, def: boolean): boolean {
  const raw = str(env, name);
  if (raw === null) return def;
  const v = raw.toLowerCase();
  if (v === 'true' || v === '1') return true;
  if (v === 'false' || v === '0') return false;
  throw invalid(name, `must be true or false, got "${raw}"`);
}

function webhookConfig(env: Env): WebhookConfig {
  const retryBaseMs = int(env, 'WEBHOOK_RETRY_BASE_MS', 5_000, 10, 600_000);
  const retryMaxMs = int(env, 'WEBHOOK_RETRY_MAX_MS', 3_600_000, 10, 86_400_000);
  if (retryMaxMs < retryBaseMs) throw invalid('WEBHOOK_RETRY_MAX_MS', `must be at least WEBHOOK_RETRY_BASE_MS (${retryBaseMs})`);
  const timeoutMs = int(env, 'WEBHOOK_TIMEOUT_MS', 10_000, 100, 10_000);
  const leaseMs = int(env, 'WEBHOOK_LEASE_MS', 30_000, 1_000, 600_000);
  // A lease must outlive the attempt it covers, or another instance could take the endpoint over
  // while a request is still in flight (a duplicate delivery in the normal case).
  if (leaseMs < timeoutMs + 1_000)
    throw invalid(
      'WEBHOOK_LEASE_MS',
      `must be at least WEBHOOK_TIMEOUT_MS + 1000 (${timeoutMs + 1_000}): a lease must outlive a delivery attempt`,
    );
  return Object.freeze({
    allowPrivate: bool(env, 'WEBHOOK_ALLOW_PRIVATE', false),
    maxInFlight: int(env, 'WEBHOOK_MAX_IN_FLIGHT', 32, 1, 1_000),
    retryBaseMs,
    retryMaxMs,
    timeoutMs,
    leaseMs,
    pollMs: int(env, 'WEBHOOK_POLL_MS', 250, 10, 60_000),
  });
}

function str(env: Env, name: string): string | null {
  const raw = env[name];
  return raw === undefined || raw.trim() === '' ? null : raw.trim();
}

const MB = 1024 * 1024;

function httpLimits(env: Env, dbStatementTimeoutMs: number, dbConnectTimeoutMs: number): HttpLimits {
  const headersTimeoutMs = int(env, 'HEADERS_TIMEOUT_MS', 10_000, 100, 600_000);
  const requestTimeoutMs = int(env, 'REQUEST_TIMEOUT_MS', 30_000, 100, 3_600_000);
  if (requestTimeoutMs < headersTimeoutMs) {
    throw invalid(
      'REQUEST_TIMEOUT_MS',
      `must be at least HEADERS_TIMEOUT_MS (${headersTimeoutMs}): the whole request cannot arrive before its headers`,
    );
  }
  const socketTimeoutMs = int(env, 'SOCKET_TIMEOUT_MS', 30_000, 100, 3_600_000);
  // Nothing moves on a connection while its request waits for the database: a shorter limit
  // would cut off requests the database is still allowed to answer.
  const busiest = dbStatementTimeoutMs + dbConnectTimeoutMs + 1_000;
  if (socketTimeoutMs < busiest) {
    throw invalid(
      'SOCKET_TIMEOUT_MS',
      `must be at least DB_STATEMENT_TIMEOUT_MS + DB_CONNECT_TIMEOUT_MS + 1000 (${busiest}): a request waiting for the database moves no bytes`,
    );
  }
  return {
    headersTimeoutMs,
    requestTimeoutMs,
    keepAliveTimeoutMs: int(env, 'KEEP_ALIVE_TIMEOUT_MS', 10_000, 100, 3_600_000),
    socketTimeoutMs,
    maxConnectionsPerAddress: int(env, 'MAX_CONNECTIONS_PER_ADDRESS', 100, 0, 1_000_000),
    maxHeaderBytes: int(env, 'MAX_HEADER_BYTES', 16_384, 1_024, 1_048_576),
  };
}

function overloadLimits(env: Env): OverloadLimits {
  const heap = str(env, 'OVERLOAD_MAX_HEAP_USED_MB');
  return {
    maxEventLoopDelayMs: int(env, 'OVERLOAD_MAX_EVENT_LOOP_DELAY_MS', 1_000, 0, 60_000),
    maxHeapUsedBytes: heap === null ? null : int(env, 'OVERLOAD_MAX_HEAP_USED_MB', 0, 0, 1_048_576) * MB,
    maxRssBytes: int(env, 'OVERLOAD_MAX_RSS_MB', 0, 0, 1_048_576) * MB,
  };
}

function metricsToken(env: Env): string | null {
  const token = str(env, 'METRICS_TOKEN');
  if (token === null) return null;
  if (token.length < 32 || !/^[\x21-\x7e]+$/.test(token)) {
    throw invalid(
      'METRICS_TOKEN',
      'must be at least 32 printable characters without spaces (e.g. `openssl rand -hex 32`); unset it to turn /metrics off',
    );
  }
  return token;
}

function databaseUrl(env: Env): string | null {
  const url = str(env, 'DATABASE_URL');
  if (url === null) return null;
  if (!/^postgres(ql)?:\/\//i.test(url)) {
    throw invalid('DATABASE_URL', 'must be a postgres:// or postgresql:// URL; unset it to use the embedded SQLite database in DATA_DIR');
  }
  try {
    new URL(url);
  } catch {
    throw invalid('DATABASE_URL', 'is not a valid URL (percent-encode special characters in the password)');
  }
  return url;
}

/**
 * redis:// or rediss:// (TLS), with an optional user, password and database number, as
 * node-redis reads it. Whether Redis answers is not checked here: an instance starts and serves
 * without it (limits fail open), so a Redis outage never stops a restart.
 */
function redisUrl(env: Env): string | null {
  const raw = str(env, 'REDIS_URL');
  if (raw === null) return null;
  const fix =
    "e.g. redis://redis:6379 or rediss://user:password@redis.example:6380/0 (percent-encode special characters in the password); unset it to keep limits in each instance's memory";
  if (!/^rediss?:\/\//i.test(raw)) throw invalid('REDIS_URL', `must be a redis:// or rediss:// URL, ${fix}`);
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw invalid('REDIS_URL', `is not a valid URL, ${fix}`);
  }
  if (url.hostname === '') throw invalid('REDIS_URL', `has no host, ${fix}`);
  if (!/^\/?(\d{1,5})?$/.test(url.pathname)) throw invalid('REDIS_URL', `the path must be a database number such as /0, ${fix}`);
  if (url.search !== '' || url.hash !== '') throw invalid('REDIS_URL', `takes no query string or fragment, ${fix}`);
  return raw;
}

function plans(env: Env): Plan[] {
  const raw = str(env, 'API_PLANS');
  if (raw === null) return ['pro_total', 'enterprise', 'premium'];
  const list = raw
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean);
  const bad = list.filter((p) => !(PLANS as readonly string[]).includes(p));
  if (list.length === 0 || bad.length > 0) {
    throw invalid('API_PLANS', `must be a comma-separated list of ${PLANS.join(', ')}; unknown: ${bad.join(', ') || '(empty)'}`);
  }
  return list as Plan[];
}

const IPV4_CIDR = /^(\d{1,3}\.){3}\d{1,3}(\/\d{1,2})?$/;
const IPV6_CIDR = /^[0-9a-f:]+(\/\d{1,3})?$/i;

/**
 * Which proxies to believe for the client address and protocol. `true` trusts every hop, which
 * lets any client spoof X-Forwarded-For (and so escape per-IP limits): prefer a hop count or the
 * proxies' addresses.
 */
function trustProxy(env: Env): boolean | number | string[] {
  const raw = (str(env, 'TRUST_PROXY') ?? 'false').toLowerCase();
  if (raw === 'false') return false;
  if (raw === 'true') return true;
  if (/^\d{1,2}$/.test(raw)) return Number(raw);
  const list = raw
    .split(',')
    .map((x) => x.trim())
    .filter(Boolean);
  if (list.length > 0 && list.every((x) => IPV4_CIDR.test(x) || IPV6_CIDR.test(x))) return list;
  throw invalid(
    'TRUST_PROXY',
    'must be false, true, a number of proxy hops (e.g. 1), or a comma-separated list of proxy addresses/CIDRs (e.g. 10.0.0.0/8,127.0.0.1)',
  );
}

export function loadConfig(env: Env = process.env): Config {
  const host = str(env, 'HOST') ?? '127.0.0.1';
  if (!/^[A-Za-z0-9.:[\]-]+$/.test(host)) throw invalid('HOST', `is not a host name or IP address: "${host}"`);

  const prefix = str(env, 'API_KEY_PREFIX') ?? 'svc';
  if (!/^[a-z][a-z0-9]{1,15}$/.test(prefix)) {
    throw invalid('API_KEY_PREFIX', 'must be 2 to 16 lowercase letters or digits, starting with a letter (e.g. "svc")');
  }

  const pepper = str(env, 'API_KEY_PEPPER');
  if (pepper !== null && pepper.length < 32) {
    throw invalid(
      'API_KEY_PEPPER',
      'must be at least 32 characters of secret (e.g. `openssl rand -base64 48`); unset it to have one generated into DATA_DIR',
    );
  }

  const logLevel = (str(env, 'LOG_LEVEL') ?? 'info').toLowerCase();
  if (!LOG_LEVELS.includes(logLevel)) throw invalid('LOG_LEVEL', `must be one of ${LOG_LEVELS.join(', ')}`);

  const cookieSecure = (str(env, 'COOKIE_SECURE') ?? 'auto').toLowerCase();
  if (cookieSecure !== 'auto' && cookieSecure !== 'always' && cookieSecure !== 'never') {
    throw invalid('COOKIE_SECURE', 'must be auto, always or never');
  }
  const rateLimitRps = int(env, 'RATE_LIMIT_RPS', 60, 1, 100_000);
  const rateLimitBurst = int(env, 'RATE_LIMIT_BURST', 120, 1, 1_000_000);
  if (rateLimitBurst < rateLimitRps) {
    throw invalid(
      'RATE_LIMIT_BURST',
      `must be at least RATE_LIMIT_RPS (${rateLimitRps}): a burst smaller than one second of the sustained rate cannot be sustained`,
    );
  }
  const authFailRps = int(env, 'AUTH_FAIL_RPS', 10, 1, 100_000);
  const authFailBurst = int(env, 'AUTH_FAIL_BURST', 20, 1, 1_000_000);
  if (authFailBurst < authFailRps) throw invalid('AUTH_FAIL_BURST', `must be at least AUTH_FAIL_RPS (${authFailRps})`);
  const dbUrl = databaseUrl(env);
  if (dbUrl !== null && pepper === null) {
    throw invalid(
      'API_KEY_PEPPER',
      "must be set when DATABASE_URL is set: every instance and the CLI must share one secret (a generated one would live in one machine's DATA_DIR only); e.g. `openssl rand -base64 48`",
    );
  }

  const dbStatementTimeoutMs = int(env, 'DB_STATEMENT_TIMEOUT_MS', 5000, 100, 600_000);
  const dbConnectTimeoutMs = int(env, 'DB_CONNECT_TIMEOUT_MS', 2000, 100, 60_000);

  return Object.freeze({
    port: int(env, 'PORT', 3000, 0, 65535),
    host,
    dataDir: path.resolve(str(env, 'DATA_DIR') ?? './data'),
    databaseUrl: dbUrl,
    apiKeyPrefix: prefix,
    apiKeyPepper: pepper,
    rateLimitRps,
    rateLimitBurst,
    authFailRps,
    authFailBurst,
    apiPlans: Object.freeze(plans(env)),
    logLevel,
    trustProxy: trustProxy(env),
    cookieSecure,
    dbPoolMax: int(env, 'DB_POOL_MAX', 10, 1, 1000),
    dbStatementTimeoutMs,
    dbConnectTimeoutMs,
    usageFlushIntervalS: int(env, 'USAGE_FLUSH_INTERVAL_S', 30, 1, 3600),
    shutdownTimeoutS: int(env, 'SHUTDOWN_TIMEOUT_S', 10, 1, 600),
    http: Object.freeze(httpLimits(env, dbStatementTimeoutMs, dbConnectTimeoutMs)),
    overload: Object.freeze(overloadLimits(env)),
    metricsToken: metricsToken(env),
    // The contract promises integrators at least 30 days to come back to a cursor.
    eventRetentionDays: int(env, 'EVENT_RETENTION_DAYS', 30, 30, 3650),
    webhooks: webhookConfig(env),
    redisUrl: redisUrl(env),
    redisTimeoutMs: int(env, 'REDIS_TIMEOUT_MS', 10, 1, 1000),
    pageCacheBytes: int(env, 'PAGE_CACHE_MB', 32, 0, 4096) * 1024 * 1024,
  });
}
