// Overload (docs/operations.md, "Overload"): past the event-loop delay or memory thresholds, 503
// service_unavailable with Retry-After, on the API and the dashboard alike; /livez and /metrics
// still answer. The process is sampled every 20 ms here (every second in production).
import { afterEach, describe, expect, it } from 'vitest';
import { OVERLOAD_RETRY_AFTER_SECONDS } from '../../src/errors.js';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { dialects } from '../helpers/db.js';
import { pause, until } from '../helpers/wait.js';
import { call, expectError, scrapeMetrics } from './helpers.js';

const SAMPLE_MS = 20;
/** The delay is a mean over each sample of 10 ms ticks: a sample of 20 ms may hold none (no mean: counted as overload). */
const DELAY_SAMPLE_MS = 100;
const TOKEN = 'overload-metrics-token-0123456789abcdef';

/**
 * The checks are armed two samples after ready. Nothing shows from outside that they are while
 * nothing is refused, so where a test needs them armed and must not be refused, it waits four
 * samples' time (where it is to be refused, it waits for the refusal instead).
 */
const armed = (sampleMs = SAMPLE_MS) => pause(sampleMs * 4);

/** Keeps the event loop busy for `ms`, as a long synchronous task would. */
function block(ms: number) {
  const end = performance.now() + ms;
  while (performance.now() < end) {
    /* busy */
  }
}

let t: TestApp | null = null;
afterEach(async () => {
  await t?.close();
  t = null;
});

describe.each(dialects())('overload on %s', (dialect) => {
  it('past the heap threshold: 503 service_unavailable with Retry-After on the API and the dashboard; /livez and /metrics answer', async () => {
    t = await buildTestApp(dialect, { env: { OVERLOAD_MAX_HEAP_USED_MB: '1', METRICS_TOKEN: TOKEN }, overloadSampleIntervalMs: SAMPLE_MS });
    await until(async () => (await call(t!, '/api/v1/citas')).statusCode !== 200, 'the checks to be armed and see the heap');
    const res = await call(t, '/api/v1/citas');
    const err = expectError(res, 503, 'service_unavailable');
    expect(res.headers['retry-after']).toBe(String(OVERLOAD_RETRY_AFTER_SECONDS));
    expect(err.message).toContain(`${OVERLOAD_RETRY_AFTER_SECONDS} seconds`);
    // Refused before authentication: no key needed to be told.
    expectError(await call(t, '/api/v1/citas', { key: null }), 503, 'service_unavailable');

    const page = await call(t, '/dashboard/sign-in', { key: null });
    expect([page.statusCode, page.headers['content-type'], page.headers['retry-after']]).toEqual([
      503,
      'text/html; charset=utf-8',
      String(OVERLOAD_RETRY_AFTER_SECONDS),
    ]);
    expect(page.body).toContain('El servicio está muy ocupado');

    expect((await call(t, '/readyz', { key: null })).statusCode).toBe(503);
    expect((await call(t, '/livez', { key: null })).statusCode).toBe(200);
    const metrics = await scrapeMetrics(t, TOKEN);
    expect(metrics.statusCode).toBe(200);
    expect(metrics.body).toMatch(/^overload_rejections_total\{reason="heapUsedBytes"\} [1-9]\d*$/m);
  });

  it('past the event-loop delay threshold: 503 until the delay is gone', async () => {
    t = await buildTestApp(dialect, { env: { OVERLOAD_MAX_EVENT_LOOP_DELAY_MS: '30' }, overloadSampleIntervalMs: DELAY_SAMPLE_MS });
    await armed(DELAY_SAMPLE_MS);
    /** Requests until one is served (a machine busy with other tests may stall us too), or 5 s. */
    const untilServed = async () => {
      let status = 0;
      for (let i = 0; i < 50 && status !== 200; i++) {
        status = (await call(t!, '/api/v1/citas')).statusCode;
        if (status !== 200) await pause(DELAY_SAMPLE_MS); // the poll's pace: one sample
      }
      return status;
    };
    expect(await untilServed()).toBe(200);
    // Sustained overload: the event loop turns only every 60 ms (a single long stall hardly moves
    // the mean delay of a sample). A request between the stalls is refused once a sample sees it.
    let refused: Awaited<ReturnType<typeof call>> | null = null;
    for (const end = performance.now() + 5_000; performance.now() < end && !refused;) {
      block(60);
      await pause(1); // one turn of the event loop between the stalls (the point: stalls every 60 ms)
      const res = await call(t, '/api/v1/citas');
      if (res.statusCode !== 200) refused = res;
    }
    expect(refused).not.toBeNull();
    expectError(refused!, 503, 'service_unavailable');
    // Calm again: a few quiet samples later, requests are served.
    expect(await untilServed()).toBe(200);
  });

  it('with the thresholds at 0, nothing is refused', async () => {
    t = await buildTestApp(dialect, {
      env: { OVERLOAD_MAX_EVENT_LOOP_DELAY_MS: '0', OVERLOAD_MAX_HEAP_USED_MB: '0' },
      overloadSampleIntervalMs: SAMPLE_MS,
    });
    await armed();
    block(200);
    // Samples that would see the delay: nothing can signal a sample that found nothing to refuse.
    await pause(SAMPLE_MS * 2);
    expect((await call(t, '/api/v1/citas')).statusCode).toBe(200);
  });
});
