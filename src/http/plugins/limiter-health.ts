// Where the rate limiters' backend shows up for operators (docs/operations.md): with REDIS_URL,
// Redis' state in /readyz as a check that never fails readiness (a Redis outage makes the limits
// fail open; it must not take every instance out of the load balancer at once), and in /metrics
// `redis_up` and `rate_limit_fallbacks_total`, the limit decisions made in this instance's memory
// because Redis was down or slow. Both read the limiters' own state (services/shared-rate-limit.ts):
// no extra round trip to Redis, nothing counted on the request path beyond what the limiters do.
import { Counter, Gauge } from 'prom-client';
import fp from 'fastify-plugin';
import type { LimiterHealth } from '../../services/shared-rate-limit.js';

export const limiterHealth = fp(
  async (app, opts: { health: () => LimiterHealth }) => {
    const { health } = opts;
    const registers = [app.metrics.registry];
    // A counter read at scrape time: the limiters' own total, which only grows.
    new Counter({
      name: 'rate_limit_fallbacks_total',
      help:
        "Rate-limit decisions made in this instance's memory because Redis (REDIS_URL) was down or did not answer within " +
        'REDIS_TIMEOUT_MS',
      registers,
      collect() {
        this.reset();
        this.inc(health().fallbacks);
      },
    });
    if (health().redis === 'off') return;
    new Gauge({
      name: 'redis_up',
      help: '1 while Redis (REDIS_URL) answers and the rate limits are shared by the fleet; 0 while they fall back to memory',
      registers,
      collect() {
        this.set(health().redis === 'up' ? 1 : 0);
      },
    });
    app.readiness.add({ name: 'redis', critical: false, check: async () => health().redis === 'up' });
  },
  { name: 'limiter-health', dependencies: ['health', 'metrics'] },
);
