// GET /livez, GET /readyz and GET /metrics (docs/operations.md, "Health" and "Metrics").
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { tokenMatches } from '../../src/http/plugins/metrics.js';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { dialects } from '../helpers/db.js';
import { until } from '../helpers/wait.js';
import { call, expectError, JSON_UTF8, scrapeMetrics, tick } from './helpers.js';

const TOKEN = 'metrics-token-for-tests-0123456789abcdef';

/** The value of one series in Prometheus text (NaN when absent). */
function sample(text: string, series: string): number {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? NaN : Number(line.slice(series.length + 1));
}

describe.each(dialects())('health and metrics on %s', (dialect) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildTestApp(dialect, { env: { METRICS_TOKEN: TOKEN, RATE_LIMIT_RPS: '2', RATE_LIMIT_BURST: '3' }, processMetrics: true });
  });
  afterAll(async () => {
    await t.close();
  });
  beforeEach(() => tick(t));

  const scrape = () => scrapeMetrics(t, TOKEN);

  it('/livez answers 200 without a key, with no data', async () => {
    const res = await call(t, '/livez', { key: null });
    expect([res.statusCode, res.headers['content-type'], res.headers['cache-control']]).toEqual([200, JSON_UTF8, 'no-store']);
    expect(res.json()).toEqual({ status: 'ok' });
    expect((await call(t, '/livez', { key: null, method: 'HEAD' })).statusCode).toBe(200);
  });

  it('/readyz answers 200 while the database answers, without a key, with no data but the checks', async () => {
    const res = await call(t, '/readyz', { key: null });
    expect([res.statusCode, res.headers['content-type']]).toEqual([200, JSON_UTF8]);
    expect(res.json()).toEqual({ status: 'ready', checks: { database: 'up' } });
  });

  it('without REDIS_URL: no Redis check or gauge; the rate-limit fallbacks are 0', async () => {
    const text = (await scrape()).body;
    expect(sample(text, 'rate_limit_fallbacks_total')).toBe(0);
    expect(text).not.toMatch(/^redis_up /m);
  });

  it('/metrics needs the token, compared whole', async () => {
    const none = await call(t, '/metrics', { key: null });
    expectError(none, 401, 'missing_api_key');
    expect(none.headers['www-authenticate']).toBe('Bearer realm="metrics"');
    for (const wrong of [`Bearer ${TOKEN}x`, `Bearer ${TOKEN.slice(0, -1)}`, 'Bearer ', TOKEN, `Basic ${TOKEN}`, `Bearer ${t.keyA}`]) {
      expectError(await call(t, '/metrics', { key: null, headers: { authorization: wrong } }), 401, 'invalid_api_key');
    }
    const ok = await scrape();
    expect(ok.statusCode).toBe(200);
    expect(ok.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
  });

  it('counts requests by route, method and status, with latency histograms', async () => {
    const before = (await scrape()).body;
    const series = 'http_requests_total{route="/api/v1/citas",method="GET",status="200"}';
    const was = sample(before, series) || 0;
    for (let i = 0; i < 2; i++) expect((await call(t, '/api/v1/citas')).statusCode).toBe(200);
    await call(t, '/api/v1/nope');
    const text = (await scrape()).body;
    expect(sample(text, series)).toBe(was + 2);
    expect(sample(text, 'http_requests_total{route="unmatched",method="GET",status="404"}')).toBeGreaterThanOrEqual(1);
    expect(sample(text, 'http_request_duration_seconds_count{route="/api/v1/citas",method="GET"}')).toBeGreaterThanOrEqual(was + 2);
    expect(text).toMatch(/^http_request_duration_seconds_bucket\{le="0\.005",route="\/api\/v1\/citas",method="GET"\} \d+$/m);
    // The scrape itself is in flight while it is answered.
    expect(sample(text, 'http_requests_in_flight')).toBe(1);
  });

  it('counts 429s by the limit that refused them', async () => {
    for (let i = 0; i < 5; i++) await call(t, '/api/v1/clientas?limit=1', { key: t.keyB });
    expect(sample((await scrape()).body, 'rate_limited_total{limit="key"}')).toBeGreaterThanOrEqual(2);
  });

  it('has the process series: event-loop delay, memory', async () => {
    const text = (await scrape()).body;
    for (const name of ['nodejs_eventloop_lag_p99_seconds', 'process_resident_memory_bytes', 'nodejs_heap_size_used_bytes']) {
      expect(text, name).toMatch(new RegExp(`^${name} [0-9.e+-]+$`, 'm'));
    }
  });

  it('/readyz turns 503 at the start of a shutdown; /livez still answers', async () => {
    const other = await buildTestApp(dialect, { seed: false });
    try {
      other.app.lifecycle.beginDrain(other.app.server);
      const res = await call(other, '/readyz', { key: null });
      expect([res.statusCode, res.json()]).toEqual([503, { status: 'shutting_down' }]);
      expect(res.headers['connection']).toBe('close');
      expect((await call(other, '/livez', { key: null })).statusCode).toBe(200);
    } finally {
      await other.close();
    }
  });
});

describe.each(dialects())('with the database gone, on %s', (dialect) => {
  it('/readyz is 503 naming the database; the failures are counted; /livez still answers', async () => {
    const t = await buildTestApp(dialect, { env: { METRICS_TOKEN: TOKEN }, seed: false });
    try {
      expect((await call(t, '/readyz', { key: null })).statusCode).toBe(200);
      await t.database.close();
      // The last answer is kept for a second: the next check after that finds the database gone.
      await until(async () => (await call(t, '/readyz', { key: null })).statusCode === 503, '/readyz to check the database again');
      const res = await call(t, '/readyz', { key: null });
      expect([res.statusCode, res.json()]).toEqual([503, { status: 'not_ready', checks: { database: 'down' } }]);
      expect((await call(t, '/livez', { key: null })).statusCode).toBe(200);
      expectError(await call(t, '/api/v1/citas'), 500, 'database_error');
      const text = (await scrapeMetrics(t, TOKEN)).body;
      const kinds = text.split('\n').filter((l) => l.startsWith('database_errors_total{') && l.includes('source="request"'));
      expect(kinds.reduce((n, l) => n + Number(l.split(' ')[1]), 0)).toBeGreaterThanOrEqual(1);
    } finally {
      await t.close().catch(() => {});
    }
  });
});

describe('without METRICS_TOKEN', () => {
  it('/metrics does not exist', async () => {
    const t = await buildTestApp('sqlite', { seed: false });
    try {
      expectError(await call(t, '/metrics', { key: null, headers: { authorization: `Bearer ${TOKEN}` } }), 404, 'not_found');
    } finally {
      await t.close();
    }
  });
});

describe('tokenMatches', () => {
  it.each([
    [`Bearer ${TOKEN}`, true],
    [`bearer ${TOKEN}`, true],
    [`Bearer  ${TOKEN} `, true],
    [`Bearer ${TOKEN}a`, false],
    [`Bearer ${TOKEN.toUpperCase()}`, false],
    ['Bearer', false],
    ['', false],
    [undefined, false],
  ])('%j -> %s', (header, expected) => {
    expect(tokenMatches(TOKEN, header)).toBe(expected);
  });
});
