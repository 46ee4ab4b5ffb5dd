// One access-log line per request, with what operators need and no secrets (see ../log.ts).
// Probes and scrapes (/livez, /readyz, /metrics) come every few seconds: their lines are at
// debug level unless they failed.
import fp from 'fastify-plugin';
import { LIVEZ_PATH, READYZ_PATH } from './health.js';
import { METRICS_PATH } from './metrics.js';

const QUIET = new Set<string | undefined>([LIVEZ_PATH, READYZ_PATH, METRICS_PATH]);

export const accessLog = fp(
  async (app) => {
    // Callback style: on every response, no promise to allocate.
    app.addHook('onResponse', (req, reply, done) => {
      const level = QUIET.has(req.routeOptions.url) && reply.statusCode < 500 ? 'debug' : 'info';
      req.log[level](
        {
          req,
          status: reply.statusCode,
          ms: Math.round(reply.elapsedTime * 10) / 10,
          clinic: req.apiKey?.clinicId,
          key: req.apiKey?.keyId,
        },
        'request',
      );
      done();
    });
  },
  { name: 'access-log' },
);
