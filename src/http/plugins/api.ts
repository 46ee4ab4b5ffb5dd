// The API scope: each collection's list and records (/api/v1/citas ...), /eventos, /me, and
// the MCP server at /mcp (../mcp/plugin.ts), behind API-key authentication, address restrictions
// and rate limits (../auth.ts), each route's scope (declared in its config, ../scopes.ts), the
// strict validator of query strings and path parameters (../query-validator.ts) and per-key usage
// counts. Its hooks and validator apply to its own routes only (an encapsulated child scope); the
// request's `apiKey` field is declared app-wide, since the access log reads it.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import fp from 'fastify-plugin';
import type { DB } from '../../db/schema.js';
import type { KeyService } from '../../services/api-keys.js';
import type { ClientasSearch } from '../../services/clientas-search/search.js';
import type { PageCache } from '../../services/page-cache.js';
import type { RateLimiter } from '../../services/rate-limit.js';
import type { AuthenticatedKey } from '../../services/api-keys.js';
import type { RawLogEntry, RequestLog } from '../../services/request-log.js';
import type { UsageCounter } from '../../services/usage.js';
import { apiAuthHook, describeLimit, principalOf, type TokenAuth } from '../auth.js';
import { MCP_PATH } from '../mcp/paths.js';
import { mcpRoutes } from '../mcp/plugin.js';
import '../disclosure.js';
import { compileQueryValidator, type ObjectSchema } from '../query-validator.js';
import { declareScopes } from '../scopes.js';
import { v1Routes } from '../routes/v1.js';
import { webhookRoutes } from '../routes/webhooks.js';

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
  /** the client search, one per process (the runtime's): the REST list and the MCP tools share it with the dashboard */
  search: ClientasSearch;
  /** OAuth access tokens (OAUTH_ISSUER set); null: keys only */
  oauth: TokenAuth | null;
  /** the request log (REQUEST_LOG_DAYS); null: off, and no hook is added */
  requestLog: RequestLog | null;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** an error response's body as sent, for the request log (set only while the log is on) */
    errorBody: string | null;
    /** the key a 404 or 405 answered outside the API's scope carried (null: none, or not known) */
    unroutedKey: AuthenticatedKey | null;
  }
}

/** A response's log entry, made with key or token `k`. */
function logEntry(req: FastifyRequest, reply: FastifyReply, k: AuthenticatedKey, atMs: number): RawLogEntry {
  const d = req.disclosed;
  return {
    clinicId: k.clinicId,
    atMs,
    requestId: req.id,
    // An OAuth token's principal carries its grant (its keyId is the grant's id too).
    keyId: k.app ? null : k.keyId,
    grantId: k.app ? k.app.grantId : null,
    method: req.method,
    url: req.url,
    status: reply.statusCode,
    errorCode: req.apiErrorCode,
    durationMs: reply.elapsedTime,
    records: d === null ? null : d.records,
    ip: req.ip ?? null,
    userAgent: req.headers['user-agent'] ?? null,
    errorBody: req.errorBody,
    clientas: d === null ? null : d.clientas,
    tag: d === null ? null : d.tag,
  };
}

/**
 * The answers given before the API's scope authenticates, which the request log records too when
 * a known key made them: a 404 for an unknown path under /api/v1/ and the method guard's 405 (on
 * the API's paths and /mcp). Decided by the status first: other responses cost one comparison.
 */
function isUnroutedApiAnswer(req: FastifyRequest, reply: FastifyReply): boolean {
  if (req.apiKey !== null || (reply.statusCode !== 404 && reply.statusCode !== 405)) return false;
  if (req.headers.authorization === undefined) return false;
  const path = req.url.split('?')[0] ?? '';
  return path.startsWith('/api/v1/') || path === MCP_PATH;
}

export const api = fp(
  async (app, opts: ApiOptions) => {
    app.decorateRequest('apiKey', null);
    app.decorateRequest('rateLimitRefusal', null);
    // What a response disclosed, for the request log (../disclosure.ts).
    app.decorateRequest('disclosed', null);
    app.decorateRequest('errorBody', null);
    app.decorateRequest('unroutedKey', null);
    const search = opts.search;
    const rateLimit = { rate: opts.limiter.rate, burst: opts.limiter.burst };
    const log = opts.requestLog;
    // On the whole app (this plugin is not encapsulated): the 404s and 405s answered outside the
    // scope below. Their key, when they carried one, is looked up once they are decided (../auth.ts,
    // principalOf): the answer describes its rate limit, and the request log records it.
    app.addHook('onSend', (req, reply, payload, done) => {
      if (!isUnroutedApiAnswer(req, reply)) return done(null, payload);
      if (log !== null && typeof payload === 'string') req.errorBody = payload;
      const atMs = opts.now();
      principalOf(req, opts.keys, opts.authFailLimiter, atMs, opts.oauth)
        .then(async (k) => {
          req.unroutedKey = k;
          if (k) await describeLimit(reply, k, req.ip, opts.limiter, atMs);
        })
        // The database or Redis unreachable: the answer goes without them (and its log entry is lost).
        .catch((err: unknown) => req.log.warn({ err }, 'the key of a 404 or 405 could not be looked up'))
        .finally(() => done(null, payload));
    });
    if (log !== null) {
      // Callback style: on every response, no promise.
      app.addHook('onResponse', (req, reply, done) => {
        const k = req.unroutedKey;
        if (k && isUnroutedApiAnswer(req, reply)) log.record(logEntry(req, reply, k, opts.now()));
        done();
      });
    }
    await app.register(async (scope) => {
      scope.setValidatorCompiler(({ schema, httpPart }) => {
        // Path parameters (a record's id) are checked by the same rules as the query string.
        if (httpPart === 'querystring' || httpPart === 'params') return compileQueryValidator(schema as ObjectSchema);
        throw new Error(`no validator for ${httpPart}`);
      });
      // Every route of this scope declares the scope it needs (config.scope): its check after
      // authentication, its security requirement and 403 in the document.
      scope.addHook('onRoute', declareScopes(opts.oauth?.resources ?? null));
      scope.addHook(
        'onRequest',
        apiAuthHook(opts.keys, opts.limiter, opts.authFailLimiter, opts.now, (limit) => app.metrics.rateLimited.inc({ limit }), opts.oauth),
      );
      // Per-key usage for the dashboard: counted in memory, written in batches (services/usage.ts).
      // Callback style: on every response, no promise to allocate.
      scope.addHook('onResponse', (req, reply, done) => {
        const k = req.apiKey;
        // Counted per key; an app's requests (an OAuth grant, not a key) show as its grant's last use instead.
        if (k && !k.app)
          opts.usage.record({
            keyId: k.keyId,
            // A test key's usage is counted with its clinic's keys (the key is the live clinic's).
            clinicId: k.ownerClinicId,
            timezone: k.timezone,
            status: reply.statusCode,
            errorCode: req.apiErrorCode,
            atMs: opts.now(),
          });
        done();
      });
      // The request log (services/request-log.ts): every response to a known key, collected in
      // memory (one object pushed, no promise) and written in batches off the request's path.
      if (log !== null) {
        scope.addHook('onSend', (req, reply, payload, done) => {
          // The error body the client got, for the log's detail (masked when written).
          if (reply.statusCode >= 400 && req.apiKey !== null && typeof payload === 'string') req.errorBody = payload;
          done(null, payload);
        });
        scope.addHook('onResponse', (req, reply, done) => {
          const k = req.apiKey;
          if (k) log.record(logEntry(req, reply, k, opts.now()));
          done();
        });
      }
      await scope.register(v1Routes, { db: opts.db, now: opts.now, rateLimit, pages: opts.pages, search });
      // Its own child: its body parsing (JSON only, 16 KB) and its body's checks are its own.
      await scope.register(webhookRoutes, { webhooks: app.webhooks });
      // Its own child: its body parsing and its 401 challenge are its own.
      await scope.register(mcpRoutes, { db: opts.db, now: opts.now, rateLimit, search, oauth: opts.oauth });
    });
  },
  { name: 'api' },
);
