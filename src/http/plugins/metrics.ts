// Request metrics for every route (docs/operations.md, "Metrics"), and GET /metrics: the
// Prometheus text of the app's registry (../../metrics.ts), only with
// `Authorization: Bearer <METRICS_TOKEN>` (compared in constant time); without METRICS_TOKEN the
// path does not exist (404). Everything is counted in memory: no per-request database write.
import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { ApiError } from '../../errors.js';
import type { Metrics } from '../../metrics.js';

declare module 'fastify' {
  interface FastifyInstance {
    metrics: Metrics;
  }
}

export const METRICS_PATH = '/metrics';
const UNMATCHED = 'unmatched';
const CHALLENGE = { 'www-authenticate': 'Bearer realm="metrics"' };

const digest = (s: string) => createHash('sha256').update(s).digest();

/** Constant time whatever the lengths: both sides are hashed to 32 bytes first. */
export function tokenMatches(expected: string, header: string | undefined): boolean {
  const m = header === undefined ? null : /^Bearer +(\S+) *$/i.exec(header);
  return timingSafeEqual(digest(expected), digest(m?.[1] ?? '')) && m !== null;
}

export const metricsPlugin = fp(
  async (app, opts: { metrics: Metrics; token: string | null }) => {
    const { metrics } = opts;
    app.decorate('metrics', metrics);

    // Label sets are few (routes x methods x statuses): keep each child, so a response costs two
    // map lookups instead of hashing its labels.
    const counters = new Map<string, ReturnType<typeof metrics.httpRequests.labels>>();
    const timers = new Map<string, ReturnType<typeof metrics.httpDuration.labels>>();

    app.addHook('onRequest', (_req, reply, done) => {
      metrics.httpInFlight.inc();
      // The response's 'close' comes once it is sent, and also when the client gave up first.
      reply.raw.once('close', () => metrics.httpInFlight.dec());
      done();
    });

    app.addHook('onResponse', (req: FastifyRequest, reply: FastifyReply, done) => {
      const route = req.routeOptions.url ?? UNMATCHED;
      const status = reply.statusCode;
      const ck = `${req.method} ${route} ${status}`;
      let counter = counters.get(ck);
      if (!counter) counters.set(ck, (counter = metrics.httpRequests.labels(route, req.method, String(status))));
      counter.inc();
      const tk = `${req.method} ${route}`;
      let timer = timers.get(tk);
      if (!timer) timers.set(tk, (timer = metrics.httpDuration.labels(route, req.method)));
      timer.observe(reply.elapsedTime / 1000);
      done();
    });

    const token = opts.token;
    if (token === null) return;
    app.get(METRICS_PATH, { schema: { hide: true } }, async (req, reply) => {
      const header = req.headers.authorization;
      if (!tokenMatches(token, header)) {
        throw header === undefined
          ? new ApiError(
              'missing_api_key',
              `${METRICS_PATH} needs the header "Authorization: Bearer <METRICS_TOKEN>"`,
              undefined,
              CHALLENGE,
            )
          : new ApiError(
              'invalid_api_key',
              `The metrics token is not valid; send "Authorization: Bearer <METRICS_TOKEN>"`,
              undefined,
              CHALLENGE,
            );
      }
      return reply.type(metrics.registry.contentType).send(await metrics.registry.metrics());
    });
  },
  { name: 'metrics' },
);
