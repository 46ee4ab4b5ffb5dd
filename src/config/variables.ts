// Every environment variable, once: its name, kind, default, bounds and the line the docs show
// (docs/configuration.md's table and the tables in docs/ are written from this by
// `npm run docs:config`; test/docs/config-docs.test.ts fails when they differ). Rules between
// variables are in rules.ts. Adding a variable: one entry here (where its value belongs in
// Config: its type follows), then `npm run docs:config`; test/unit/config.test.ts lists every
// default and wants the new one too.
//
// The groups (http, overload, webhooks) are the objects the code takes whole, and the docs'
// tables of one topic (docs/operations.md, docs/webhooks.md).
//
// Longer than 300 lines on purpose: one entry per variable, each with its line of docs, and one
// list is the point (split by topic, a reader would look for a variable in several files).
import path from 'node:path';
import { Type } from '@sinclair/typebox';
import { PLANS } from '../domain/records.js';
import { flag, int, literals, oneOf, optionalInt, optionalText, shaped, text } from './kinds.js';

const MB = 1024 * 1024;

const IPV4_CIDR = /^(\d{1,3}\.){3}\d{1,3}(\/\d{1,2})?$/;
const IPV6_CIDR = /^[0-9a-f:]+(\/\d{1,3})?$/i;

/** TRUST_PROXY's text: false, true, a hop count, or a list of addresses (checked by the schema). */
function trustProxyValue(raw: string): unknown {
  const v = raw.toLowerCase();
  if (v === 'false') return false;
  if (v === 'true') return true;
  if (/^\d{1,2}$/.test(v)) return Number(v);
  return v
    .split(',')
    .map((x) => x.trim())
    .filter(Boolean);
}

/**
 * redis:// or rediss:// (TLS), with an optional user, password and database number, as
 * node-redis reads it. Whether Redis answers is not checked here: an instance starts and serves
 * without it (limits fail open), so a Redis outage never stops a restart. The URL is never
 * repeated in the message (it may hold a password).
 */
function smtpUrlProblem(raw: unknown): string | null {
  const fix = 'e.g. smtps://user:password@mail.example.com:465 (percent-encode special characters in the password); unset it for no e-mail';
  const text = String(raw);
  if (!/^smtps?:\/\//i.test(text)) return `must be an smtp:// or smtps:// URL, ${fix}`;
  if (!URL.canParse(text)) return `is not a valid URL, ${fix}`;
  const url = new URL(text);
  if (url.hostname === '') return `has no host, ${fix}`;
  if ((url.pathname !== '' && url.pathname !== '/') || url.hash !== '') return `takes no path or fragment, ${fix}`;
  return null;
}

function redisUrlProblem(raw: string): string | null {
  const fix =
    'e.g. redis://redis:6379 or rediss://user:password@redis.example:6380/0 (percent-encode special characters in the password); unset ' +
    "it to keep limits in each instance's memory";
  if (!/^rediss?:\/\//i.test(raw)) return `must be a redis:// or rediss:// URL, ${fix}`;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return `is not a valid URL, ${fix}`;
  }
  if (url.hostname === '') return `has no host, ${fix}`;
  if (!/^\/?(\d{1,5})?$/.test(url.pathname)) return `the path must be a database number such as /0, ${fix}`;
  if (url.search !== '' || url.hash !== '') return `takes no query string or fragment, ${fix}`;
  return null;
}

function databaseUrlProblem(raw: string): string | null {
  if (!/^postgres(ql)?:\/\//i.test(raw))
    return 'must be a postgres:// or postgresql:// URL; unset it to use the embedded SQLite database in DATA_DIR';
  try {
    new URL(raw);
  } catch {
    return 'is not a valid URL (percent-encode special characters in the password)';
  }
  return null;
}

/** OAUTH_ISSUER: an origin (no path, query or fragment), https unless the host is a loopback one. */
function oauthIssuerProblem(raw: string): string | null {
  const fix = 'e.g. https://api.example.com (the address apps and browsers reach the service at)';
  if (!URL.canParse(raw)) return `is not a URL, ${fix}`;
  const u = new URL(raw);
  if (u.protocol !== 'https:' && !(u.protocol === 'http:' && ['127.0.0.1', 'localhost', '[::1]'].includes(u.hostname)))
    return `must use https (http only for 127.0.0.1, localhost or [::1]), ${fix}`;
  if ((u.pathname !== '/' && u.pathname !== '') || u.search !== '' || u.hash !== '' || u.username !== '')
    return `must be an origin only, without a path, query, fragment or user, ${fix}`;
  return null;
}

/** An OTLP/HTTP endpoint: http(s), a host; the URL is never repeated (it may hold credentials). */
const otlpFix = 'must be an http:// or https:// URL, e.g. http://otel-collector:4318; unset it to export no traces';
function otlpUrlProblem(raw: string): string | null {
  if (!URL.canParse(raw)) return `is not a URL: ${otlpFix}`;
  const u = new URL(raw);
  if (u.protocol !== 'http:' && u.protocol !== 'https:') return otlpFix;
  if (u.hostname === '') return `has no host: ${otlpFix}`;
  return null;
}

/**
 * OTEL_EXPORTER_OTLP_HEADERS and _TRACES_HEADERS, as the OTLP exporter reads them: comma-separated
 * name=value entries, each value percent-encoded. The exporter skips an entry it cannot read
 * without a word, so a header the collector needs (its API key) would be missing: checked here.
 * A value is never repeated (it is a credential); a name may be.
 */
const otlpHeadersFix =
  'write name=value entries separated by commas, e.g. x-api-key=KEY,x-team=TEAM (a space in a value is %20, a comma %2C)';
function otlpHeadersProblem(raw: string): string | null {
  const entries = raw.split(',');
  for (const [i, entry] of entries.entries()) {
    if (entry.trim() === '') continue;
    const n = i + 1;
    const eq = entry.indexOf('=');
    if (eq <= 0) return `entry ${n} is not name=value: ${otlpHeadersFix}`;
    const name = entry.slice(0, eq).trim();
    const value = entry.slice(eq + 1).trim();
    // Not repeated when it is not a name: "Authorization: Bearer KEY=..." would hold a credential.
    if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(name)) return `entry ${n}'s name is not an HTTP header name: ${otlpHeadersFix}`;
    if (value === '') return `entry ${n} (${name}) has no value: ${otlpHeadersFix}`;
    // The exporter reads what follows a ; as metadata, and drops it.
    if (value.includes(';')) return `entry ${n} (${name}): a ; in a value must be written %3B`;
    let decoded: string;
    try {
      decoded = decodeURIComponent(value);
    } catch {
      return `entry ${n} (${name}): its value is not valid percent-encoding (a % must start %XX, two hex digits): ${otlpHeadersFix}`;
    }
    // Control characters other than a tab: Node refuses them in a header, so every export would fail.
    if ([...decoded].some((c) => (c < ' ' && c !== '\t') || c === '\x7f'))
      return `entry ${n} (${name}): its value holds a line break or another control character`;
  }
  return null;
}

function planList(raw: string): string[] {
  return raw
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean);
}

const fromMebibytes = (mb: number) => mb * MB;
const toMebibytes = (bytes: number) => bytes / MB;

export const ConfigSchema = Type.Object({
  port: int('PORT', { default: 3000, minimum: 0, maximum: 65535, description: 'HTTP port' }),
  host: text('HOST', {
    default: '127.0.0.1',
    pattern: '^[A-Za-z0-9.:[\\]-]+$',
    allowedDoc: 'a host name or IP address',
    problem: (raw) => `is not a host name or IP address: "${raw}"`,
    description: 'bind address (`0.0.0.0` in containers)',
  }),
  dataDir: Type.Transform(
    text('DATA_DIR', {
      default: './data',
      pattern: '.',
      allowedDoc: 'a directory',
      problem: () => 'must name a directory',
      description: 'where the embedded SQLite database (and a generated pepper) live',
    }),
  )
    .Decode((dir) => path.resolve(dir))
    .Encode((dir) => dir),
  databaseUrl: optionalText('DATABASE_URL', {
    problem: () => 'must be a postgres:// or postgresql:// URL',
    refine: databaseUrlProblem,
    defaultDoc: 'unset (SQLite in `DATA_DIR`)',
    allowedDoc: '`postgres://` or `postgresql://` URL',
    description: 'use this PostgreSQL database instead of the embedded SQLite',
  }),
  redisUrl: optionalText('REDIS_URL', {
    problem: () => 'must be a redis:// or rediss:// URL',
    refine: redisUrlProblem,
    defaultDoc: "unset (limits in each instance's memory)",
    allowedDoc: '`redis://host:6379` or `rediss://user:password@host:6380/0`',
    description: 'several instances share the rate limits and key changes (revocations, edits, rolls) through this Redis (docs/deploy.md)',
  }),
  redisTimeoutMs: int('REDIS_TIMEOUT_MS', {
    default: 10,
    minimum: 1,
    maximum: 1000,
    description:
      "how long a request waits for Redis before its limit is decided in the instance's memory instead (fails open; logged once, back on " +
      'Redis by itself)',
  }),
  pageCacheBytes: Type.Transform(
    int('PAGE_CACHE_MB', {
      default: 32,
      minimum: 0,
      maximum: 4096,
      description:
        'memory (MiB) for the list pages the service built, kept by their `ETag` and sent again while nothing changed (least recently ' +
        'used out first); `0` builds every page',
    }),
  )
    .Decode(fromMebibytes)
    .Encode(toMebibytes),
  apiKeyPrefix: text('API_KEY_PREFIX', {
    default: 'svc',
    pattern: '^[a-z][a-z0-9]{1,15}$',
    allowedDoc: '2-16 lowercase letters or digits, starting with a letter',
    problem: () => 'must be 2 to 16 lowercase letters or digits, starting with a letter (e.g. "svc")',
    description: 'prefix of new keys',
  }),
  apiKeyPepper: optionalText('API_KEY_PEPPER', {
    minLength: 32,
    problem: () =>
      'must be at least 32 characters of secret (e.g. `openssl rand -base64 48`); unset it to have one generated into DATA_DIR',
    defaultDoc: 'generated into `DATA_DIR/api-key-pepper`',
    allowedDoc: 'at least 32 characters',
    description: "secret of the keys' keyed hash and of the webhook secrets' encryption: the same for every instance and the CLI",
  }),
  rateLimitRps: int('RATE_LIMIT_RPS', { default: 60, minimum: 1, maximum: 100_000, description: 'sustained requests per second per key' }),
  rateLimitBurst: int('RATE_LIMIT_BURST', { default: 120, minimum: 1, maximum: 1_000_000, description: 'burst per key' }),
  authFailRps: int('AUTH_FAIL_RPS', {
    default: 10,
    minimum: 1,
    maximum: 100_000,
    description: 'failed authentications per second per client IP',
  }),
  authFailBurst: int('AUTH_FAIL_BURST', {
    default: 20,
    minimum: 1,
    maximum: 1_000_000,
    description: 'burst of failed authentications per client IP',
  }),
  apiPlans: Type.Transform(
    shaped('API_PLANS', Type.Array(Type.Union(literals(PLANS)), { minItems: 1 }), {
      default: ['pro_total', 'enterprise', 'premium'],
      parse: planList,
      problem: (raw) => {
        const unknown = planList(raw).filter((p) => !(PLANS as readonly string[]).includes(p));
        return `must be a comma-separated list of ${PLANS.join(', ')}; unknown: ${unknown.join(', ') || '(empty)'}`;
      },
      allowedDoc: `a comma-separated list of ${PLANS.map((p) => `\`${p}\``).join(', ')}`,
      description: 'plans whose clinics may create keys',
    }),
  )
    .Decode((plans) => Object.freeze(plans))
    .Encode((plans) => [...plans]),
  logLevel: oneOf('LOG_LEVEL', ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], {
    default: 'info',
    description: 'the least severe log lines written',
  }),
  logFormat: oneOf('LOG_FORMAT', ['auto', 'json', 'pretty'], {
    default: 'auto',
    description:
      'log lines as JSON objects, one per line (`json`, for log collectors) or as human lines (`pretty`); `auto`: human when stdout is a ' +
      'terminal, JSON otherwise',
  }),
  trustProxy: shaped(
    'TRUST_PROXY',
    Type.Union([
      Type.Boolean(),
      Type.Integer({ minimum: 0, maximum: 99 }),
      Type.Array(Type.String({ pattern: `${IPV4_CIDR.source}|${IPV6_CIDR.source}` }), { minItems: 1 }),
    ]),
    {
      default: false,
      parse: trustProxyValue,
      problem: () =>
        'must be false, true, a number of proxy hops (e.g. 1), or a comma-separated list of proxy addresses/CIDRs (e.g. ' +
        '10.0.0.0/8,127.0.0.1)',
      allowedDoc: '`false`, `true`, a number of hops, or addresses/CIDRs',
      description:
        "behind a reverse proxy: the number of proxy hops (e.g. `1`) or the proxies' addresses/CIDRs, so the client IP and HTTPS come " +
        'from `X-Forwarded-*`; `true` trusts every hop (any client could then spoof its address)',
    },
  ),
  cookieSecure: oneOf('COOKIE_SECURE', ['auto', 'always', 'never'], {
    default: 'auto',
    problem: 'must be auto, always or never',
    description:
      'dashboard cookie `Secure` flag: `auto` (when the request is HTTPS), `always` (recommended in production behind TLS), `never`',
  }),
  dbPoolMax: int('DB_POOL_MAX', { default: 10, minimum: 1, maximum: 1000, description: 'PostgreSQL connections per instance' }),
  dbStatementTimeoutMs: int('DB_STATEMENT_TIMEOUT_MS', {
    default: 5000,
    minimum: 100,
    maximum: 600_000,
    description: 'PostgreSQL statement timeout',
  }),
  dbConnectTimeoutMs: int('DB_CONNECT_TIMEOUT_MS', {
    default: 2000,
    minimum: 100,
    maximum: 60_000,
    description:
      'longest wait for a PostgreSQL connection, new or from the pool: with the statement timeout, bounds a request while the database ' +
      'fails',
  }),
  usageFlushIntervalS: int('USAGE_FLUSH_INTERVAL_S', {
    default: 30,
    minimum: 1,
    maximum: 3600,
    description: "how often the dashboard's API usage counts are written",
  }),
  shutdownTimeoutS: int('SHUTDOWN_TIMEOUT_S', {
    default: 10,
    minimum: 1,
    maximum: 600,
    description: 'a graceful shutdown (SIGTERM/SIGINT) that takes longer exits with code 1',
  }),
  metricsToken: optionalText('METRICS_TOKEN', {
    minLength: 32,
    pattern: '^[\\x21-\\x7e]+$',
    problem: () => 'must be at least 32 printable characters without spaces (e.g. `openssl rand -hex 32`); unset it to turn /metrics off',
    defaultDoc: 'unset (`/metrics` does not exist)',
    allowedDoc: 'at least 32 printable characters, no spaces',
    description: 'bearer token of `GET /metrics`',
  }),
  // The contract promises integrators at least 30 days to come back to a cursor.
  eventRetentionDays: int('EVENT_RETENTION_DAYS', {
    default: 30,
    minimum: 30,
    maximum: 3650,
    description:
      'days the change feed keeps its events; older ones are removed in the background, and an older cursor is `410 cursor_expired`',
  }),
  sandboxTickS: int('SANDBOX_TICK_S', {
    default: 60,
    minimum: 0,
    maximum: 86_400,
    description:
      "seconds between the moves of the test-mode sandboxes (new bookings, calls and clientas, each an event of the sandbox's feed " +
      'and webhooks); only sandboxes that exist move; `0` stops them',
  }),
  requestLogDays: int('REQUEST_LOG_DAYS', {
    default: 30,
    minimum: 0,
    maximum: 3650,
    description:
      'days the request log and the client access record keep each API request (every request made with a key: shown in the dashboard, ' +
      '`clinic-api logs`, `clinic-api access`); older entries are removed in the background; `0` turns both off (nothing collected or ' +
      'written)',
  }),
  /** Timeouts and caps against slow and greedy clients (docs/operations.md). */
  http: Type.Object({
    headersTimeoutMs: int('HEADERS_TIMEOUT_MS', {
      default: 10_000,
      minimum: 100,
      maximum: 600_000,
      description:
        'the request line and headers must arrive within this, else 408 `request_timeout` and the connection closed (a slowloris ' +
        'connection; checked every second)',
    }),
    requestTimeoutMs: int('REQUEST_TIMEOUT_MS', {
      default: 30_000,
      minimum: 100,
      maximum: 3_600_000,
      description:
        'the whole request, body included, must arrive within this (a body sent a byte at a time), else 408 and the connection closed',
    }),
    keepAliveTimeoutMs: int('KEEP_ALIVE_TIMEOUT_MS', {
      default: 10_000,
      minimum: 100,
      maximum: 3_600_000,
      description:
        "an idle keep-alive connection is closed after this; behind a proxy that pools connections, set it above the proxy's idle timeout",
    }),
    socketTimeoutMs: int('SOCKET_TIMEOUT_MS', {
      default: 30_000,
      minimum: 100,
      maximum: 3_600_000,
      description:
        'a connection on which nothing moves either way for this long mid-request or mid-response (a client that stopped reading its ' +
        'answer) is destroyed',
    }),
    maxConnectionsPerAddress: int('MAX_CONNECTIONS_PER_ADDRESS', {
      default: 100,
      minimum: 0,
      maximum: 1_000_000,
      description:
        "open connections per client address (the TCP peer: behind a proxy, the proxy's); one more is closed at once, before it is read; " +
        '`0`: no cap',
    }),
    maxHeaderBytes: int('MAX_HEADER_BYTES', {
      default: 16_384,
      minimum: 1_024,
      maximum: 1_048_576,
      description: 'request line plus headers, else 431 `headers_too_large` and the connection closed',
    }),
  }),
  /** Past any threshold, requests are refused with 503 service_unavailable (0: not checked). */
  overload: Type.Object({
    maxEventLoopDelayMs: int('OVERLOAD_MAX_EVENT_LOOP_DELAY_MS', {
      default: 1_000,
      minimum: 0,
      maximum: 60_000,
      description:
        'past this mean event-loop delay over the last second (sustained slowness: one long stall among quick turns hardly moves the ' +
        'mean), 503 `service_unavailable`; `0`: not checked',
    }),
    maxHeapUsedBytes: Type.Transform(
      optionalInt('OVERLOAD_MAX_HEAP_USED_MB', {
        minimum: 0,
        maximum: 1_048_576,
        defaultDoc: "90% of V8's heap limit",
        description:
          'past this V8 heap use (MiB; near the limit V8 spends its time collecting, then the process dies), 503 `service_unavailable`; ' +
          '`0`: not checked',
      }),
    )
      .Decode((mb) => (mb === null ? null : fromMebibytes(mb)))
      .Encode((bytes) => (bytes === null ? null : toMebibytes(bytes))),
    maxRssBytes: Type.Transform(
      int('OVERLOAD_MAX_RSS_MB', {
        default: 0,
        minimum: 0,
        maximum: 1_048_576,
        defaultDoc: '`0` (not checked)',
        description: "past this resident memory (MiB), 503 `service_unavailable`: set it below the container's memory limit",
      }),
    )
      .Decode(fromMebibytes)
      .Encode(toMebibytes),
  }),
  /** Webhook deliveries (docs/webhooks.md). */
  webhooks: Type.Object({
    allowPrivate: flag('WEBHOOK_ALLOW_PRIVATE', {
      default: false,
      description:
        '`true`: webhooks may go to private/loopback addresses and plain `http://` (tests, trying webhooks locally, internal receivers); ' +
        'set it for the server and for the `clinic-api` command alike: each reads its own environment',
    }),
    maxInFlight: int('WEBHOOK_MAX_IN_FLIGHT', {
      default: 32,
      minimum: 1,
      maximum: 1_000,
      description: 'webhook deliveries in flight per server process (always at most one per endpoint)',
    }),
    retryBaseMs: int('WEBHOOK_RETRY_BASE_MS', {
      default: 5_000,
      minimum: 10,
      maximum: 600_000,
      description: "the first retry's back-off ceiling, doubled per failure up to `WEBHOOK_RETRY_MAX_MS` (full jitter)",
    }),
    retryMaxMs: int('WEBHOOK_RETRY_MAX_MS', {
      default: 3_600_000,
      minimum: 10,
      maximum: 86_400_000,
      description: 'the largest back-off ceiling of failed deliveries',
    }),
    timeoutMs: int('WEBHOOK_TIMEOUT_MS', {
      default: 10_000,
      minimum: 100,
      maximum: 10_000,
      description: "a delivery attempt's time limit (lower it only in tests: the promise is 10 s)",
    }),
    leaseMs: int('WEBHOOK_LEASE_MS', {
      default: 30_000,
      minimum: 1_000,
      maximum: 600_000,
      description:
        'how long an instance owns an endpoint, counted from each request it sends; `WEBHOOK_LEASE_MS` - `WEBHOOK_TIMEOUT_MS` is how ' +
        'long a stalled instance keeps an endpoint in the middle of an attempt',
    }),
    pollMs: int('WEBHOOK_POLL_MS', {
      default: 250,
      minimum: 10,
      maximum: 60_000,
      description: "how often each instance looks for due webhook endpoints (PostgreSQL also wakes it at each import's commit)",
    }),
    logDays: int('WEBHOOK_LOG_DAYS', {
      default: 28,
      minimum: 1,
      maximum: 365,
      description: 'days the delivery log keeps every attempt of every webhook delivery (dashboard, `clinic-api webhooks deliveries`)',
    }),
    alertAfterMin: int('WEBHOOK_ALERT_AFTER_MIN', {
      default: 60,
      minimum: 1,
      maximum: 10_080,
      description: "minutes an endpoint fails without a break before the clinic's owners get an e-mail (needs `SMTP_URL`)",
    }),
    smtpUrl: optionalText('SMTP_URL', {
      problem: () => 'must be an smtp:// or smtps:// URL',
      refine: smtpUrlProblem,
      defaultDoc: 'unset (no e-mail is sent)',
      allowedDoc: '`smtps://user:password@mail.example.com:465` or `smtp://...:587` (STARTTLS)',
      description: "the mail server that sends webhook alerts to the clinic's owners",
    }),
    smtpFrom: optionalText('SMTP_FROM', {
      problem: () => 'must be an e-mail address, optionally with a name: Clinic API <alerts@example.com>',
      refine: (v) => (/^([^<>]*<)?[^\s@<>]+@[^\s@<>]+(>)?$/.test(String(v).trim()) ? null : 'must be an e-mail address'),
      defaultDoc: "`clinic-api@` and the mail server's host",
      allowedDoc: '`alerts@example.com` or `Clinic API <alerts@example.com>`',
      description: 'the sender of the alert e-mails',
    }),
  }),
  /** OpenTelemetry traces (docs/operations.md, "Traces"): the standard OTEL_* variables, read here so a bad one stops the start. */
  tracing: Type.Object({
    endpoint: optionalText('OTEL_EXPORTER_OTLP_ENDPOINT', {
      problem: () => otlpFix,
      refine: otlpUrlProblem,
      defaultDoc: 'unset (no traces; no tracing code loaded)',
      allowedDoc: '`http://` or `https://` URL',
      description: 'the OTLP/HTTP collector traces are exported to (`/v1/traces` is added); set, the server exports traces',
    }),
    tracesEndpoint: optionalText('OTEL_EXPORTER_OTLP_TRACES_ENDPOINT', {
      problem: () => otlpFix,
      refine: otlpUrlProblem,
      defaultDoc: 'unset',
      allowedDoc: '`http://` or `https://` URL',
      description: 'the full URL traces are sent to, instead of `OTEL_EXPORTER_OTLP_ENDPOINT`; set, the server exports traces',
    }),
    // Checked only: the exporter reads both itself.
    headers: optionalText('OTEL_EXPORTER_OTLP_HEADERS', {
      problem: () => otlpHeadersFix,
      refine: otlpHeadersProblem,
      defaultDoc: 'unset',
      allowedDoc: '`name=value,...`, percent-encoded',
      description: "headers of every export (a vendor's key)",
    }),
    tracesHeaders: optionalText('OTEL_EXPORTER_OTLP_TRACES_HEADERS', {
      problem: () => otlpHeadersFix,
      refine: otlpHeadersProblem,
      defaultDoc: 'unset',
      allowedDoc: 'as above',
      description: 'the same, for traces only',
    }),
    disabled: flag('OTEL_SDK_DISABLED', {
      default: false,
      description: '`true`: no traces even with an endpoint set (nothing of tracing is loaded)',
    }),
    serviceName: text('OTEL_SERVICE_NAME', {
      default: 'clinic-api',
      pattern: '^[\\x21-\\x7e]{1,100}$',
      allowedDoc: '1-100 printable characters, no spaces',
      problem: () => 'must be 1 to 100 printable characters without spaces, e.g. clinic-api',
      description: "the traces' `service.name`",
    }),
    sampler: oneOf(
      'OTEL_TRACES_SAMPLER',
      ['parentbased_always_on', 'parentbased_always_off', 'parentbased_traceidratio', 'always_on', 'always_off', 'traceidratio'],
      {
        default: 'parentbased_always_on',
        description:
          "which requests are traced: `parentbased_*` follows the caller's `traceparent` decision and else the rest of the name; " +
          '`traceidratio`: the share `OTEL_TRACES_SAMPLER_ARG`',
      },
    ),
    samplerArg: shaped('OTEL_TRACES_SAMPLER_ARG', Type.Number({ minimum: 0, maximum: 1 }), {
      default: 1,
      parse: (raw) => (/^(0|1)?(\.\d+)?$/.test(raw) && raw !== '' && raw !== '.' ? Number(raw) : raw),
      problem: (raw) => `must be a number from 0 to 1 (e.g. 0.1 traces one request in ten), got "${raw}"`,
      allowedDoc: '0 to 1',
      description: 'the share of requests the `*traceidratio` samplers trace',
    }),
    scheduleDelayMs: int('OTEL_BSP_SCHEDULE_DELAY', {
      default: 5_000,
      minimum: 1,
      maximum: 600_000,
      description: 'how long finished spans wait to be sent in one batch (milliseconds)',
    }),
  }),
  /** The OAuth authorization server (docs/oauth.md). */
  oauth: Type.Object({
    issuer: optionalText('OAUTH_ISSUER', {
      problem: () => 'must be the public https:// origin of the service, such as https://api.example.com',
      refine: oauthIssuerProblem,
      defaultDoc: 'unset (OAuth off: apps connect with keys only)',
      allowedDoc: '`https://host[:port]` (`http://` only for a loopback host)',
      description:
        'the public origin apps reach the service at; set, the service is an OAuth 2.1 authorization server for the API and `/mcp` ' +
        '(docs/oauth.md)',
    }),
    accessTokenTtlS: int('OAUTH_ACCESS_TOKEN_TTL_S', {
      default: 3600,
      minimum: 60,
      maximum: 3600,
      description: "an access token's lifetime in seconds (at most one hour)",
    }),
    refreshTokenDays: int('OAUTH_REFRESH_TOKEN_DAYS', {
      default: 30,
      minimum: 1,
      maximum: 365,
      description: "a refresh token's lifetime in days; each use replaces it with a new one",
    }),
    registrationsPerHour: int('OAUTH_REGISTRATIONS_PER_HOUR', {
      default: 20,
      minimum: 1,
      maximum: 100_000,
      description: 'app registrations allowed per client address per hour (bursts of the same size)',
    }),
    authorizationRequestsPerMinute: int('OAUTH_AUTHORIZATION_REQUESTS_PER_MINUTE', {
      default: 30,
      minimum: 1,
      maximum: 1_000_000,
      description:
        'authorization requests (`/oauth/auth`, each stored for up to 10 minutes until answered) allowed per client address per minute ' +
        '(bursts of the same size)',
    }),
    tokenRequestsPerMinute: int('OAUTH_TOKEN_REQUESTS_PER_MINUTE', {
      default: 60,
      minimum: 1,
      maximum: 1_000_000,
      description: 'token and revocation requests allowed per client address per minute (bursts of the same size)',
    }),
    clientMetadataAllowPrivate: flag('OAUTH_CLIENT_METADATA_ALLOW_PRIVATE', {
      default: false,
      description:
        "`true`: an app's client ID metadata document may be on a loopback address, over `http://` too (trying an app on one machine); " +
        'otherwise only `https://` on public addresses',
    }),
  }),
});
