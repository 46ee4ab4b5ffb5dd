// The configured rate, held by two real server processes together: one key, hammered on both
// instances at once for a few seconds, is allowed what one bucket allows in that time (the burst,
// and the rate for every second), within the 10 % the contract gives a fleet. Limits kept in
// each instance's memory would allow about twice as much. (fleet.test.ts checks the budget with
// a refill too slow to matter; this one checks the rate itself.)
//
// The time is measured, not assumed: however slowly a crowded machine runs the test, the
// allowance is computed from the seconds it actually took. The load only has to stay above the
// rate, and GCRA's burst absorbs a stall of up to burst / rate seconds without losing allowance.
import { inject } from 'vitest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newPgDatabaseUrl } from '../helpers/db.js';
import { DEMO_KEY_RE, startInstances, stopAllInstances, Traffic, type Instance } from '../helpers/fleet.js';
import { redisAvailable, startRedis, type RedisServer } from '../helpers/redis.js';
import { pause } from '../helpers/wait.js';

const RATE = 40;
const BURST = 40;
const LOAD_MS = 3_000;

const hasPostgres = inject('pgAdminUrl') !== null;
if (!hasPostgres)
  process.stdout.write(
    'SKIPPED the shared rate test (test/fleet/shared-rate.test.ts): it runs on PostgreSQL, and this run has none (TEST_SQLITE_ONLY=1)\n',
  );
const runs = redisAvailable('the shared rate test (test/fleet/shared-rate.test.ts)') && hasPostgres;

describe.skipIf(!runs)('two instances on one Redis hold one key to the configured rate', () => {
  let redis: RedisServer;
  let pair: Instance[];

  beforeAll(async () => {
    redis = await startRedis();
    pair = await startInstances(['A', 'B'], {
      DATABASE_URL: await newPgDatabaseUrl(),
      API_KEY_PEPPER: 'shared-rate-test-pepper-0123456789abcdefghij',
      REDIS_URL: redis.url,
      RATE_LIMIT_RPS: String(RATE),
      RATE_LIMIT_BURST: String(BURST),
      // As in fleet.test.ts: a crowded two-core machine must not turn a slow answer into an
      // outage (limited in memory meanwhile); failing open is tested in fail-open.test.ts.
      REDIS_TIMEOUT_MS: '250',
    });
    for (const i of pair)
      await i.waitForLog((l) => l.msg === 'Redis answers: rate limits are shared by every instance', 10_000, 'Redis answering');
  });
  afterAll(async () => {
    await stopAllInstances();
    await redis?.close();
  });

  it(`${RATE}/s with bursts of ${BURST}, under several times that load spread over both: allowed within 10 %`, async () => {
    const key = pair.map((i) => DEMO_KEY_RE.exec(i.output())?.[1]).find(Boolean)!;
    expect(key).toBeDefined();
    const traffic = pair.map((i) => new Traffic(`${i.baseUrl}/api/v1/me`, key, 4));
    const t0 = performance.now();
    for (const t of traffic) t.start();
    await pause(LOAD_MS); // the rate is measured over this time: the time is the point
    await Promise.all(traffic.map((t) => t.stop()));
    const seconds = (performance.now() - t0) / 1000;

    expect(traffic.flatMap((t) => t.failures)).toEqual([]);
    const statuses = traffic.flatMap((t) => t.statuses);
    expect(new Set(statuses)).toEqual(new Set([200, 429]));
    const allowed = statuses.filter((s) => s === 200).length;
    const expected = BURST + RATE * seconds;
    // The test means something only if the load was well above the limit.
    expect(statuses.length, `${statuses.length} requests in ${seconds.toFixed(2)} s`).toBeGreaterThan(2 * expected);
    // Both instances allowed some: one budget spent through both.
    for (const t of traffic) expect(t.statuses.filter((s) => s === 200).length).toBeGreaterThan(0);
    const ratio = allowed / expected;
    expect(ratio, `allowed ${allowed}, expected ${expected.toFixed(0)} in ${seconds.toFixed(2)} s`).toBeGreaterThanOrEqual(0.9);
    expect(ratio, `allowed ${allowed}, expected ${expected.toFixed(0)} in ${seconds.toFixed(2)} s`).toBeLessThanOrEqual(1.1);
  });
});
