// Configuration (docs/configuration.md): every variable validated up front, errors naming the variable.
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { DomainError } from '../../src/errors.js';

/** The invalid_config error that loadConfig(env) throws (fails the test if it does not throw one). */
function configError(env: Record<string, string>): DomainError {
  try {
    loadConfig(env);
  } catch (err) {
    expect(err).toBeInstanceOf(DomainError);
    expect((err as DomainError).reason).toBe('invalid_config');
    return err as DomainError;
  }
  throw new Error(`loadConfig(${JSON.stringify(env)}) did not throw`);
}

describe('loadConfig defaults', () => {
  it('an empty environment gives the documented defaults', () => {
    const c = loadConfig({});
    expect(c).toEqual({
      port: 3000,
      host: '127.0.0.1',
      dataDir: path.resolve('./data'),
      databaseUrl: null,
      apiKeyPrefix: 'svc',
      apiKeyPepper: null,
      rateLimitRps: 60,
      rateLimitBurst: 120,
      authFailRps: 10,
      authFailBurst: 20,
      apiPlans: ['pro_total', 'enterprise', 'premium'],
      logLevel: 'info',
      logFormat: 'auto',
      trustProxy: false,
      cookieSecure: 'auto',
      dbPoolMax: 10,
      dbStatementTimeoutMs: 5000,
      redisUrl: null,
      redisTimeoutMs: 10,
      dbConnectTimeoutMs: 2000,
      usageFlushIntervalS: 30,
      shutdownTimeoutS: 10,
      http: {
        headersTimeoutMs: 10_000,
        requestTimeoutMs: 30_000,
        keepAliveTimeoutMs: 10_000,
        socketTimeoutMs: 30_000,
        maxConnectionsPerAddress: 100,
        maxHeaderBytes: 16_384,
      },
      overload: { maxEventLoopDelayMs: 1000, maxHeapUsedBytes: null, maxRssBytes: 0 },
      metricsToken: null,
      eventRetentionDays: 30,
      requestLogDays: 30,
      sandboxTickS: 60,
      webhooks: {
        allowPrivate: false,
        maxInFlight: 32,
        retryBaseMs: 5000,
        retryMaxMs: 3_600_000,
        timeoutMs: 10_000,
        leaseMs: 30_000,
        pollMs: 250,
        logDays: 28,
        alertAfterMin: 60,
        smtpUrl: null,
        smtpFrom: null,
      },
      oauth: {
        issuer: null,
        accessTokenTtlS: 3600,
        refreshTokenDays: 30,
        registrationsPerHour: 20,
        tokenRequestsPerMinute: 60,
        clientMetadataAllowPrivate: false,
        authorizationRequestsPerMinute: 30,
      },
      tracing: {
        endpoint: null,
        tracesEndpoint: null,
        headers: null,
        tracesHeaders: null,
        disabled: false,
        serviceName: 'clinic-api',
        sampler: 'parentbased_always_on',
        samplerArg: 1,
        scheduleDelayMs: 5000,
      },
      pageCacheBytes: 32 * 1024 * 1024,
    });
  });

  it('reads the standard OTEL_* variables of traces', () => {
    const c = loadConfig({
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318',
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://traces.example.com/v1/traces',
      OTEL_SDK_DISABLED: 'true',
      OTEL_SERVICE_NAME: 'clinic-api-eu',
      OTEL_TRACES_SAMPLER: 'ParentBased_TraceIdRatio',
      OTEL_TRACES_SAMPLER_ARG: '0.25',
      OTEL_BSP_SCHEDULE_DELAY: '1000',
      OTEL_EXPORTER_OTLP_HEADERS: 'x-honeycomb-team=abc123, Authorization=Bearer%20tok,',
      OTEL_EXPORTER_OTLP_TRACES_HEADERS: 'x-scope-orgid=clinic%2Ceu',
    });
    expect(c.tracing).toEqual({
      endpoint: 'http://collector:4318',
      tracesEndpoint: 'https://traces.example.com/v1/traces',
      headers: 'x-honeycomb-team=abc123, Authorization=Bearer%20tok,',
      tracesHeaders: 'x-scope-orgid=clinic%2Ceu',
      disabled: true,
      serviceName: 'clinic-api-eu',
      sampler: 'parentbased_traceidratio',
      samplerArg: 0.25,
      scheduleDelayMs: 1000,
    });
    expect(loadConfig({ OTEL_TRACES_SAMPLER_ARG: '0' }).tracing.samplerArg).toBe(0);
    expect(loadConfig({ OTEL_TRACES_SAMPLER_ARG: '1' }).tracing.samplerArg).toBe(1);
  });

  it('PAGE_CACHE_MB is read in MiB, and 0 turns the page cache off', () => {
    expect(loadConfig({ PAGE_CACHE_MB: '256' }).pageCacheBytes).toBe(256 * 1024 * 1024);
    expect(loadConfig({ PAGE_CACHE_MB: '0' }).pageCacheBytes).toBe(0);
  });

  it('reads the operations variables (timeouts, caps, overload, metrics, shutdown)', () => {
    const c = loadConfig({
      DB_CONNECT_TIMEOUT_MS: '1500',
      USAGE_FLUSH_INTERVAL_S: '5',
      SHUTDOWN_TIMEOUT_S: '20',
      HEADERS_TIMEOUT_MS: '2000',
      REQUEST_TIMEOUT_MS: '4000',
      KEEP_ALIVE_TIMEOUT_MS: '3000',
      SOCKET_TIMEOUT_MS: '9000',
      MAX_CONNECTIONS_PER_ADDRESS: '0',
      MAX_HEADER_BYTES: '8192',
      OVERLOAD_MAX_EVENT_LOOP_DELAY_MS: '0',
      OVERLOAD_MAX_HEAP_USED_MB: '512',
      OVERLOAD_MAX_RSS_MB: '1024',
      METRICS_TOKEN: 'm'.repeat(32),
    });
    expect(c).toMatchObject({
      dbConnectTimeoutMs: 1500,
      usageFlushIntervalS: 5,
      shutdownTimeoutS: 20,
      http: {
        headersTimeoutMs: 2000,
        requestTimeoutMs: 4000,
        keepAliveTimeoutMs: 3000,
        socketTimeoutMs: 9000,
        maxConnectionsPerAddress: 0,
        maxHeaderBytes: 8192,
      },
      overload: { maxEventLoopDelayMs: 0, maxHeapUsedBytes: 512 * 1024 * 1024, maxRssBytes: 1024 * 1024 * 1024 },
      metricsToken: 'm'.repeat(32),
    });
    expect(loadConfig({ OVERLOAD_MAX_HEAP_USED_MB: '0' }).overload.maxHeapUsedBytes).toBe(0);
    expect(Object.isFrozen(c.http) && Object.isFrozen(c.overload)).toBe(true);
  });

  it('empty and blank values count as unset', () => {
    const c = loadConfig({ PORT: '', HOST: '  ', API_KEY_PREFIX: '', API_KEY_PEPPER: ' ', DATABASE_URL: '', REDIS_URL: '', API_PLANS: '' });
    expect(c.port).toBe(3000);
    expect(c.host).toBe('127.0.0.1');
    expect(c.apiKeyPrefix).toBe('svc');
    expect(c.apiKeyPepper).toBeNull();
    expect(c.databaseUrl).toBeNull();
    expect(c.redisUrl).toBeNull();
    expect(c.apiPlans).toEqual(['pro_total', 'enterprise', 'premium']);
  });

  it('reads every variable', () => {
    const c = loadConfig({
      PORT: '8080',
      HOST: '0.0.0.0',
      DATA_DIR: '/var/lib/clinic',
      DATABASE_URL: 'postgres://u:p@db:5432/clinic',
      API_KEY_PREFIX: 'clin',
      API_KEY_PEPPER: 'x'.repeat(32),
      RATE_LIMIT_RPS: '5',
      RATE_LIMIT_BURST: '9',
      AUTH_FAIL_RPS: '2',
      AUTH_FAIL_BURST: '3',
      API_PLANS: 'basic, premium',
      LOG_LEVEL: 'DEBUG',
      TRUST_PROXY: 'true',
      DB_POOL_MAX: '4',
      DB_STATEMENT_TIMEOUT_MS: '1500',
      COOKIE_SECURE: 'Always',
      EVENT_RETENTION_DAYS: '90',
      REDIS_URL: 'redis://redis:6379',
      REDIS_TIMEOUT_MS: '25',
    });
    expect(c).toMatchObject({
      port: 8080,
      host: '0.0.0.0',
      dataDir: '/var/lib/clinic',
      databaseUrl: 'postgres://u:p@db:5432/clinic',
      apiKeyPrefix: 'clin',
      apiKeyPepper: 'x'.repeat(32),
      rateLimitRps: 5,
      rateLimitBurst: 9,
      authFailRps: 2,
      authFailBurst: 3,
      apiPlans: ['basic', 'premium'],
      logLevel: 'debug',
      trustProxy: true,
      dbPoolMax: 4,
      dbStatementTimeoutMs: 1500,
      cookieSecure: 'always',
      eventRetentionDays: 90,
      redisUrl: 'redis://redis:6379',
      redisTimeoutMs: 25,
    });
    // TLS, credentials, a database number: as node-redis reads them.
    for (const url of [
      'rediss://user:p%40ss@redis.example:6380/2',
      'redis://:secret@10.0.0.5',
      'REDIS://localhost/',
      'redis://[::1]:6379/0',
    ]) {
      expect(loadConfig({ REDIS_URL: url }).redisUrl).toBe(url);
    }
    expect(loadConfig({ DATABASE_URL: 'postgresql://localhost/clinic', API_KEY_PEPPER: 'x'.repeat(32) }).databaseUrl).toBe(
      'postgresql://localhost/clinic',
    );
    expect(loadConfig({ TRUST_PROXY: '2' }).trustProxy).toBe(2);
    expect(loadConfig({ TRUST_PROXY: '10.0.0.0/8, 127.0.0.1' }).trustProxy).toEqual(['10.0.0.0/8', '127.0.0.1']);
    expect(loadConfig({ TRUST_PROXY: 'False' }).trustProxy).toBe(false);
    expect(loadConfig({ PORT: '0' }).port).toBe(0);
    expect(loadConfig({ PORT: '65535' }).port).toBe(65535);
    expect(loadConfig({ DATA_DIR: 'rel/dir' }).dataDir).toBe(path.resolve('rel/dir'));
    expect(
      loadConfig({
        WEBHOOK_ALLOW_PRIVATE: 'TRUE',
        WEBHOOK_MAX_IN_FLIGHT: '8',
        WEBHOOK_RETRY_BASE_MS: '100',
        WEBHOOK_RETRY_MAX_MS: '1000',
        WEBHOOK_TIMEOUT_MS: '500',
        WEBHOOK_LEASE_MS: '1500',
        WEBHOOK_POLL_MS: '20',
        WEBHOOK_LOG_DAYS: '7',
        WEBHOOK_ALERT_AFTER_MIN: '15',
        SMTP_URL: 'smtps://alerts:pw@mail.example.com:465',
        SMTP_FROM: 'Clinic API <alerts@example.com>',
      }).webhooks,
    ).toEqual({
      allowPrivate: true,
      maxInFlight: 8,
      retryBaseMs: 100,
      retryMaxMs: 1000,
      timeoutMs: 500,
      leaseMs: 1500,
      pollMs: 20,
      logDays: 7,
      alertAfterMin: 15,
      smtpUrl: 'smtps://alerts:pw@mail.example.com:465',
      smtpFrom: 'Clinic API <alerts@example.com>',
    });
    for (const bad of ['http://mail.example.com', 'smtp://', 'smtp://mail.example.com/path'])
      expect(() => loadConfig({ SMTP_URL: bad }), bad).toThrow(/SMTP_URL/);
    expect(loadConfig({ WEBHOOK_ALLOW_PRIVATE: 'false' }).webhooks.allowPrivate).toBe(false);
  });

  it('the result is frozen, API_PLANS included', () => {
    const c = loadConfig({});
    expect(Object.isFrozen(c)).toBe(true);
    expect(Object.isFrozen(c.apiPlans)).toBe(true);
    expect(() => {
      (c as { port: number }).port = 1;
    }).toThrow(TypeError);
    expect(() => {
      (c.apiPlans as string[]).push('basic');
    }).toThrow(TypeError);
  });

  it('does not read process.env when given an environment', () => {
    const saved = process.env.PORT;
    process.env.PORT = 'not-a-port';
    try {
      expect(loadConfig({}).port).toBe(3000);
    } finally {
      if (saved === undefined) delete process.env.PORT;
      else process.env.PORT = saved;
    }
  });
});

describe('loadConfig validation names the bad variable', () => {
  const cases: [string, Record<string, string>, RegExp][] = [
    ['PORT', { PORT: 'abc' }, /whole number from 0 to 65535, got "abc"/],
    ['PORT', { PORT: '70000' }, /got "70000"/],
    ['PORT', { PORT: '-1' }, /got "-1"/],
    ['PORT', { PORT: '80.5' }, /got "80.5"/],
    ['HOST', { HOST: 'bad host!' }, /not a host name or IP address/],
    ['API_KEY_PREFIX', { API_KEY_PREFIX: 'Bad_' }, /lowercase letters or digits/],
    ['API_KEY_PREFIX', { API_KEY_PREFIX: 'svc_live' }, /lowercase letters or digits/],
    ['API_KEY_PREFIX', { API_KEY_PREFIX: '1svc' }, /starting with a letter/],
    ['API_KEY_PREFIX', { API_KEY_PREFIX: 's' }, /2 to 16/],
    ['API_KEY_PEPPER', { API_KEY_PEPPER: 'short-secret' }, /at least 32 characters/],
    ['API_PLANS', { API_PLANS: 'gold' }, /unknown: gold/],
    ['API_PLANS', { API_PLANS: 'premium,Gold' }, /unknown: Gold/],
    ['API_PLANS', { API_PLANS: ',,' }, /\(empty\)/],
    ['DATABASE_URL', { DATABASE_URL: 'mysql://u:p@localhost/clinic' }, /postgres:\/\/ or postgresql:\/\//],
    ['DATABASE_URL', { DATABASE_URL: 'postgres://u:p@[bad/clinic' }, /not a valid URL/],
    ['LOG_LEVEL', { LOG_LEVEL: 'loud' }, /one of fatal, error, warn, info, debug, trace, silent/],
    ['RATE_LIMIT_RPS', { RATE_LIMIT_RPS: '0' }, /from 1 to/],
    ['RATE_LIMIT_RPS', { RATE_LIMIT_RPS: 'fast' }, /got "fast"/],
    ['RATE_LIMIT_BURST', { RATE_LIMIT_BURST: '0' }, /from 1 to/],
    ['AUTH_FAIL_RPS', { AUTH_FAIL_RPS: '0' }, /from 1 to/],
    ['TRUST_PROXY', { TRUST_PROXY: 'yes' }, /false, true, a number of proxy hops/],
    ['TRUST_PROXY', { TRUST_PROXY: '10.0.0.0/8,proxy.local' }, /list of proxy addresses/],
    ['COOKIE_SECURE', { COOKIE_SECURE: 'yes' }, /auto, always or never/],
    ['RATE_LIMIT_BURST', { RATE_LIMIT_RPS: '60', RATE_LIMIT_BURST: '59' }, /at least RATE_LIMIT_RPS \(60\)/],
    ['AUTH_FAIL_BURST', { AUTH_FAIL_RPS: '10', AUTH_FAIL_BURST: '5' }, /at least AUTH_FAIL_RPS/],
    ['API_KEY_PEPPER', { DATABASE_URL: 'postgres://db/clinic' }, /must be set when DATABASE_URL is set/],
    ['DB_POOL_MAX', { DB_POOL_MAX: '0' }, /from 1 to 1000/],
    ['DB_STATEMENT_TIMEOUT_MS', { DB_STATEMENT_TIMEOUT_MS: '5' }, /from 100 to/],
    ['REDIS_URL', { REDIS_URL: 'localhost:6379' }, /must be a redis:\/\/ or rediss:\/\/ URL, e\.g\. redis:\/\/redis:6379/],
    ['REDIS_URL', { REDIS_URL: 'http://redis:6379' }, /must be a redis:\/\/ or rediss:\/\/ URL/],
    ['REDIS_URL', { REDIS_URL: 'redis://u:p@[bad:6379' }, /is not a valid URL.*percent-encode/],
    ['REDIS_URL', { REDIS_URL: 'redis://redis:6379/cache' }, /database number such as \/0/],
    ['REDIS_URL', { REDIS_URL: 'redis://redis:6379/0?timeout=5' }, /no query string/],
    ['REDIS_URL', { REDIS_URL: 'redis://redis:99999' }, /is not a valid URL/],
    ['REDIS_TIMEOUT_MS', { REDIS_TIMEOUT_MS: '0' }, /from 1 to 1000/],
    ['REDIS_TIMEOUT_MS', { REDIS_TIMEOUT_MS: '5000' }, /from 1 to 1000/],
    ['PAGE_CACHE_MB', { PAGE_CACHE_MB: '32MB' }, /PAGE_CACHE_MB.*whole number from 0 to 4096, got "32MB"/],
    ['PAGE_CACHE_MB', { PAGE_CACHE_MB: '5000' }, /from 0 to 4096/],
    // The feed promises integrators at least 30 days.
    ['EVENT_RETENTION_DAYS', { EVENT_RETENTION_DAYS: '29' }, /from 30 to 3650/],
    ['EVENT_RETENTION_DAYS', { EVENT_RETENTION_DAYS: '30d' }, /got "30d"/],
    ['WEBHOOK_ALLOW_PRIVATE', { WEBHOOK_ALLOW_PRIVATE: 'yes' }, /true or false, got "yes"/],
    ['WEBHOOK_MAX_IN_FLIGHT', { WEBHOOK_MAX_IN_FLIGHT: '0' }, /from 1 to 1000/],
    ['WEBHOOK_RETRY_BASE_MS', { WEBHOOK_RETRY_BASE_MS: '5s' }, /got "5s"/],
    ['WEBHOOK_RETRY_MAX_MS', { WEBHOOK_RETRY_BASE_MS: '5000', WEBHOOK_RETRY_MAX_MS: '1000' }, /at least WEBHOOK_RETRY_BASE_MS \(5000\)/],
    // The contract: any 2xx within 10 s is delivered, so the limit may only be lowered (tests).
    ['WEBHOOK_TIMEOUT_MS', { WEBHOOK_TIMEOUT_MS: '20000' }, /from 100 to 10000/],
    ['WEBHOOK_LEASE_MS', { WEBHOOK_LEASE_MS: '5000' }, /at least WEBHOOK_TIMEOUT_MS \+ 1000 \(11000\)/],
    ['WEBHOOK_POLL_MS', { WEBHOOK_POLL_MS: '1' }, /from 10 to 60000/],
    ['DB_CONNECT_TIMEOUT_MS', { DB_CONNECT_TIMEOUT_MS: '50' }, /from 100 to 60000/],
    ['USAGE_FLUSH_INTERVAL_S', { USAGE_FLUSH_INTERVAL_S: '0' }, /from 1 to 3600/],
    ['SHUTDOWN_TIMEOUT_S', { SHUTDOWN_TIMEOUT_S: 'soon' }, /from 1 to 600, got "soon"/],
    ['SHUTDOWN_TIMEOUT_S', { SHUTDOWN_TIMEOUT_S: '0' }, /from 1 to 600/],
    ['HEADERS_TIMEOUT_MS', { HEADERS_TIMEOUT_MS: '10s' }, /whole number/],
    ['REQUEST_TIMEOUT_MS', { HEADERS_TIMEOUT_MS: '5000', REQUEST_TIMEOUT_MS: '4000' }, /at least HEADERS_TIMEOUT_MS \(5000\)/],
    ['KEEP_ALIVE_TIMEOUT_MS', { KEEP_ALIVE_TIMEOUT_MS: '0' }, /from 100 to/],
    ['SOCKET_TIMEOUT_MS', { SOCKET_TIMEOUT_MS: '7000' }, /at least DB_STATEMENT_TIMEOUT_MS \+ DB_CONNECT_TIMEOUT_MS \+ 1000 \(8000\)/],
    ['MAX_CONNECTIONS_PER_ADDRESS', { MAX_CONNECTIONS_PER_ADDRESS: '-1' }, /whole number from 0/],
    ['MAX_HEADER_BYTES', { MAX_HEADER_BYTES: '512' }, /from 1024 to 1048576/],
    ['OVERLOAD_MAX_EVENT_LOOP_DELAY_MS', { OVERLOAD_MAX_EVENT_LOOP_DELAY_MS: 'high' }, /whole number/],
    ['OVERLOAD_MAX_HEAP_USED_MB', { OVERLOAD_MAX_HEAP_USED_MB: '1.5' }, /whole number/],
    ['OVERLOAD_MAX_RSS_MB', { OVERLOAD_MAX_RSS_MB: 'lots' }, /whole number/],
    ['METRICS_TOKEN', { METRICS_TOKEN: 'short' }, /at least 32 printable characters/],
    ['METRICS_TOKEN', { METRICS_TOKEN: `${'m'.repeat(20)} ${'m'.repeat(20)}` }, /without spaces/],
    [
      'OTEL_EXPORTER_OTLP_ENDPOINT',
      { OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318' },
      /http:\/\/ or https:\/\/ URL, e\.g\. http:\/\/otel-collector:4318/,
    ],
    ['OTEL_EXPORTER_OTLP_ENDPOINT', { OTEL_EXPORTER_OTLP_ENDPOINT: 'grpc://collector:4317' }, /http:\/\/ or https:\/\//],
    ['OTEL_EXPORTER_OTLP_TRACES_ENDPOINT', { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'not a url' }, /is not a URL/],
    ['OTEL_SERVICE_NAME', { OTEL_SERVICE_NAME: 'clinic api' }, /without spaces/],
    // The exporter skips an entry it cannot read, in silence: a header the collector needs would be missing.
    ['OTEL_EXPORTER_OTLP_HEADERS', { OTEL_EXPORTER_OTLP_HEADERS: 'x-team=a,Authorization: Bearer b' }, /entry 2 is not name=value/],
    ['OTEL_EXPORTER_OTLP_HEADERS', { OTEL_EXPORTER_OTLP_HEADERS: 'x team=a' }, /entry 1's name is not an HTTP header name/],
    ['OTEL_EXPORTER_OTLP_HEADERS', { OTEL_EXPORTER_OTLP_HEADERS: 'x-team=' }, /entry 1 \(x-team\) has no value/],
    ['OTEL_EXPORTER_OTLP_TRACES_HEADERS', { OTEL_EXPORTER_OTLP_TRACES_HEADERS: 'x-key=100%' }, /entry 1 \(x-key\).*percent-encod/],
    ['OTEL_EXPORTER_OTLP_TRACES_HEADERS', { OTEL_EXPORTER_OTLP_TRACES_HEADERS: 'x-key=a%0Ab' }, /entry 1 \(x-key\).*line break/],
    ['OTEL_EXPORTER_OTLP_TRACES_HEADERS', { OTEL_EXPORTER_OTLP_TRACES_HEADERS: 'x-key=a;b' }, /entry 1 \(x-key\): a ; .* %3B/],
    ['OTEL_TRACES_SAMPLER', { OTEL_TRACES_SAMPLER: 'sometimes' }, /one of parentbased_always_on, .*traceidratio/],
    ['OTEL_TRACES_SAMPLER_ARG', { OTEL_TRACES_SAMPLER_ARG: '1.5' }, /number from 0 to 1 .*got "1\.5"/],
    ['OTEL_TRACES_SAMPLER_ARG', { OTEL_TRACES_SAMPLER_ARG: '10%' }, /got "10%"/],
    ['OTEL_BSP_SCHEDULE_DELAY', { OTEL_BSP_SCHEDULE_DELAY: '5s' }, /whole number from 1 to 600000/],
  ];

  it.each(cases)('%s: %j', (variable, env, message) => {
    const err = configError(env);
    expect(err.details.field).toBe(variable);
    expect(err.message.startsWith(`${variable}: `)).toBe(true);
    expect(err.message).toMatch(message);
  });

  it('a pepper of exactly 32 characters is accepted', () => {
    expect(loadConfig({ API_KEY_PEPPER: 'p'.repeat(32) }).apiKeyPepper).toBe('p'.repeat(32));
  });

  it('a refused REDIS_URL is not echoed (it may hold a password)', () => {
    const err = configError({ REDIS_URL: 'redis://user:hunter2-secret@redis:6379/db' });
    expect(err.message).not.toContain('hunter2');
  });

  it('the error does not echo the pepper it refused', () => {
    const err = configError({ API_KEY_PEPPER: 'my-little-secret' });
    expect(err.message).not.toContain('my-little-secret');
  });

  it('a refused OTEL_EXPORTER_OTLP_HEADERS is not echoed (its values are credentials)', () => {
    for (const v of ['x-team=s3cr3t-value,broken', 'x-team=s3cr3t-value%zz', 'x-team=s3cr3t-value%0D', 'Authorization: Bearer s3cr3t=x'])
      expect(configError({ OTEL_EXPORTER_OTLP_HEADERS: v }).message).not.toContain('s3cr3t');
  });

  it('the error does not echo the metrics token it refused', () => {
    expect(configError({ METRICS_TOKEN: 'tiny-secret' }).message).not.toContain('tiny-secret');
  });
});

describe('OAUTH_ISSUER', () => {
  it('takes an https origin, or http on a loopback host', () => {
    expect(loadConfig({ OAUTH_ISSUER: 'https://api.example.com' }).oauth.issuer).toBe('https://api.example.com');
    expect(loadConfig({ OAUTH_ISSUER: 'http://127.0.0.1:3000' }).oauth.issuer).toBe('http://127.0.0.1:3000');
  });
  it.each(['http://api.example.com', 'https://api.example.com/v1', 'https://api.example.com?x=1', 'not a url'])(
    'refuses %s, naming the variable',
    (v) => {
      expect(() => loadConfig({ OAUTH_ISSUER: v })).toThrow(/OAUTH_ISSUER/);
    },
  );
});
