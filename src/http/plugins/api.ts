// The API scope: /api/v1/citas, /clientas, /llamadas (and one record of each), /eventos, /me behind
// API-key authentication, address restrictions and rate limits (../auth.ts), each route's scope
// (declared in its config, ../scopes.ts), the strict validator of query strings and path
// parameters (../query-validator.ts) and per-key usage counts. Its hooks and validator apply to
// its own routes only (an encapsulated child scope); the request's `apiKey` field is declared
// app-wide, since the access log reads it.
import type { Kysely } from 'kysely';
import fp from 'fastify-plugin';
import type { DB } from '../../db/schema.js';
import type { KeyService } from '../../services/api-keys.js';
import type { PageCache } from '../../services/page-cache.js';
import type { RateLimiter } from '../../services/rate-limit.js';
import type { UsageCounter } from '../../services/usage.js';
import { apiAuthHook } from '../auth.js';
import { compileQueryValidator, type ObjectSchema } from '../query-validator.js';
import { declareScope } from '../scopes.js';
import { v1Routes } from '../routes/v1.js';

export interface ApiOptions {
  db: Kysely<DB>;
  keys: KeyService;
  /** per key */
  limiter: RateLimiter;
  /** per client address, for failed authentications */
  authFailLimiter: RateLimiter;
  usage: UsageCounter;
  now: () => number;
  /** the lists' built pages, by ETag (services/page-cache.ts) */
  pages: PageCache;
}

export const api = fp(
  async (app, opts: ApiOptions) => {
    app.decorateRequest('apiKey', null);
    await app.register(async (scope) => {
      scope.setValidatorCompiler(({ schema, httpPart }) => {
        // Path parameters (a record's id) are checked by the same rules as the query string.
        if (httpPart === 'querystring' || httpPart === 'params') return compileQueryValidator(schema as ObjectSchema);
        throw new Error(`no validator for ${httpPart}`);
      });
      // Every route of this scope declares the scope it needs (config.scope): its check after
      // authentication, its security requirement and 403 in the document.
      scope.addHook('onRoute', declareScope);
      scope.addHook(
        'onRequest',
        apiAuthHook(opts.keys, opts.limiter, opts.authFailLimiter, opts.now, (limit) => app.metrics.rateLimited.inc({ limit })),
      );
      // Per-key usage for the dashboard: counted in memory, written in batches (services/usage.ts).
      // Callback style: on every response, no promise to allocate.
      scope.addHook('onResponse', (req, reply, done) => {
        const k = req.apiKey;
        if (k)
          opts.usage.record({
            keyId: k.keyId,
            clinicId: k.clinicId,
            timezone: k.timezone,
            status: reply.statusCode,
            errorCode: req.apiErrorCode,
            atMs: opts.now(),
          });
        done();
      });
      await scope.register(v1Routes, {
        db: opts.db,
        now: opts.now,
        rateLimit: { rate: opts.limiter.rate, burst: opts.limiter.burst },
        pages: opts.pages,
      });
    });
  },
  { name: 'api' },
);
