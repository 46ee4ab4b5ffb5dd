// Overload (docs/operations.md, "Overload"): past OVERLOAD_MAX_EVENT_LOOP_DELAY_MS of event-loop
// delay, or OVERLOAD_MAX_HEAP_USED_MB / OVERLOAD_MAX_RSS_MB of memory, requests are refused at
// once with 503 service_unavailable and Retry-After (@fastify/under-pressure samples the process
// every second), instead of slow answers for everyone or a crash out of memory. /livez and
// /metrics still answer, so the process is not restarted for being busy and its operators can
// see why; /readyz is refused like the rest, which moves traffic to other instances. The checks
// start two samples after the app is ready: start-up work (migrations, the first run's demo)
// blocks the event loop before the server listens, and that is not overload.
import v8 from 'node:v8';
import underPressure from '@fastify/under-pressure';
import fp from 'fastify-plugin';
import type { OverloadLimits } from '../../config.js';
import { errors } from '../../errors.js';
import { LIVEZ_PATH } from './health.js';
import { METRICS_PATH } from './metrics.js';

/** The default heap threshold: 90% of V8's heap limit (near it, V8 spends its time collecting). */
export function defaultHeapLimitBytes(): number {
  return Math.floor(v8.getHeapStatistics().heap_size_limit * 0.9);
}

const ALWAYS_ANSWERED = new Set([LIVEZ_PATH, METRICS_PATH]);

export interface OverloadOptions {
  limits: OverloadLimits;
  /** How often the process is sampled (default 1 s; tests shorten it). */
  sampleIntervalMs?: number;
}

export const overload = fp(
  async (app, opts: OverloadOptions) => {
    const { limits } = opts;
    const maxHeapUsedBytes = limits.maxHeapUsedBytes ?? defaultHeapLimitBytes();
    const sampleIntervalMs = opts.sampleIntervalMs ?? 1_000;
    let armedAt = Infinity;
    app.addHook('onReady', async () => {
      armedAt = performance.now() + 2 * sampleIntervalMs;
    });
    await app.register(underPressure, {
      maxEventLoopDelay: limits.maxEventLoopDelayMs,
      maxHeapUsedBytes,
      maxRssBytes: limits.maxRssBytes,
      sampleInterval: sampleIntervalMs,
      pressureHandler: (req, _reply, type) => {
        if (performance.now() < armedAt || ALWAYS_ANSWERED.has(req.url.split('?')[0] ?? '')) return undefined;
        app.metrics.overloaded.inc({ reason: type });
        // A rejected promise goes to the error handler: the API's error shape, or the dashboard's page.
        return Promise.reject(errors.serviceUnavailable());
      },
    });
  },
  { name: 'overload', dependencies: ['metrics'] },
);
