// The app factory: one Fastify instance for the server, the CLI and the tests (app.inject).
// It never listens; src/server.ts does.
import { randomUUID } from 'node:crypto';
import zlib from 'node:zlib';
import compress from '@fastify/compress';
import swagger from '@fastify/swagger';
import Fastify, { LogController, type FastifyInstance, type FastifyReply, type FastifyRequest, type FastifyServerOptions } from 'fastify';
import { adminPlugin, type AdminTuning } from '../admin/index.js';
import type { Config } from '../config.js';
import type { Database } from '../db/connect.js';
import { errors } from '../errors.js';
import type { KeyService } from '../services/api-keys.js';
import type { RateLimiter } from '../services/rate-limit.js';
import { UsageCounter } from '../services/usage.js';
import { apiAuthHook } from './auth.js';
import { errorHandler, sendError } from './error-handler.js';
import { logSerializers } from './log.js';
import { compileQueryValidator } from './query-validator.js';
import { API_PATHS, v1Routes } from './routes/v1.js';

export interface AppDeps {
  config: Config;
  database: Database;
  keys: KeyService;
  limiter: RateLimiter;
  authFailLimiter: RateLimiter;
  /** Wall clock in ms; tests pass a fixed one. */
  now?: () => number;
  /** Logger options; false silences (tests). */
  logger?: FastifyServerOptions['logger'];
  /** Per-key API usage counter; made here when absent. Flushed (and stopped) on app close. */
  usage?: UsageCounter;
  /** Dashboard timeouts and sign-in throttles (tests shorten them). */
  admin?: AdminTuning;
}

declare module 'fastify' {
  interface FastifyInstance {
    usage: UsageCounter;
  }
}

const REQUEST_ID_RE = /^[A-Za-z0-9._:-]{1,128}$/;
const ALLOW = 'GET, HEAD';
/** Paths where only GET and HEAD exist: any other method is a 405, whatever the method. */
const READ_ONLY_PATHS = new Set<string>([...API_PATHS, '/api/v1/openapi.json']);

/** Trust the `hops` proxies nearest to us (Fastify's typings lack the numeric form). */
function trustHops(hops: number) {
  return (_address: string, hop: number) => hop < hops;
}

function commonHeaders(req: FastifyRequest, reply: FastifyReply): void {
  reply.header('x-request-id', req.id);
  reply.header('cache-control', 'no-store');
  reply.header('x-content-type-options', 'nosniff');
}

export async function buildApp(deps: AppDeps): Promise<FastifyInstance> {
  const now = deps.now ?? Date.now;
  const app = Fastify({
    logger: deps.logger ?? { level: deps.config.logLevel, serializers: logSerializers },
    // Echo a sane incoming X-Request-Id, else make one, so a client can quote it to support.
    genReqId: (req) => {
      const incoming = req.headers['x-request-id'];
      return typeof incoming === 'string' && REQUEST_ID_RE.test(incoming) ? incoming : randomUUID();
    },
    requestIdHeader: false,
    logController: new LogController({ disableRequestLogging: true }),
    trustProxy: typeof deps.config.trustProxy === 'number' ? trustHops(deps.config.trustProxy) : deps.config.trustProxy,
    // While closing, requests in flight still get answers in the contract's shape (a closed
    // database is a 500 database_error with Retry-After), not Fastify's own 503 body.
    return503OnClosing: false,
    // Errors Fastify raises before any hook (e.g. a URL with bad percent-encoding) get the one
    // error shape and headers too.
    frameworkErrors: (err, rawReq, rawReply) => {
      const req = rawReq as unknown as FastifyRequest;
      const reply = rawReply as unknown as FastifyReply;
      commonHeaders(req, reply);
      const status = (err as { statusCode?: number }).statusCode ?? 400;
      const apiErr = status < 500 ? errors.unreadableRequest(err.message) : errors.internalError();
      void sendError(apiErr, req, reply);
    },
  });

  app.decorateRequest('apiKey', null);
  app.decorateRequest('apiErrorCode', null);
  const usage = deps.usage ?? new UsageCounter(deps.database.db, { onError: (err) => app.log.error({ err }, 'usage flush failed') });
  app.decorate('usage', usage);
  app.addHook('onClose', async () => {
    await usage.close().catch((err) => app.log.error({ err }, 'usage flush on close failed'));
  });
  app.setValidatorCompiler(({ schema, httpPart }) => {
    if (httpPart === 'querystring') return compileQueryValidator(schema as never);
    throw new Error(`no validator for ${httpPart}`);
  });
  app.setErrorHandler(errorHandler);
  app.setNotFoundHandler((req, reply) => sendError(errors.notFound(req.url.split('?')[0] ?? '/'), req, reply));

  app.addHook('onRequest', async (req, reply) => {
    commonHeaders(req, reply);
    // Before the body is parsed and before authentication: the method alone decides, for every
    // method (POST with a malformed body, PROPFIND, QUERY ...), and reveals nothing about data.
    if (req.method !== 'GET' && req.method !== 'HEAD' && READ_ONLY_PATHS.has(req.url.split('?')[0] ?? '')) {
      throw errors.methodNotAllowed(req.method, ALLOW);
    }
  });
  // One access-log line per request, with what operators need and no secrets (see log.ts).
  app.addHook('onResponse', async (req, reply) => {
    req.log.info(
      { req, status: reply.statusCode, ms: Math.round(reply.elapsedTime * 10) / 10, clinic: req.apiKey?.clinicId, key: req.apiKey?.keyId },
      'request',
    );
  });

  await app.register(compress, {
    threshold: 1024,
    encodings: ['br', 'gzip', 'deflate'],
    // Pages are tens of KB: a 256 KB brotli window (default 4 MB) compresses them as well and
    // keeps each in-flight stream's native memory small, which bounds RSS under concurrency.
    brotliOptions: { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 4, [zlib.constants.BROTLI_PARAM_LGWIN]: 18 } },
    zlibOptions: { memLevel: 7 },
  });
  await app.register(swagger, {
    // The document describes the public API only (its routes carry tags), never the dashboard.
    hideUntagged: true,
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Clinic Integration API',
        version: '1.0.0',
        description: "Read-only access to a clinic's appointments (citas), clients (clientas) and calls answered by its voice assistant (llamadas).",
      },
      components: { securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer', description: 'Authorization: Bearer <prefix>_<secret>' } } },
      security: [{ bearerAuth: [] }],
    },
  });

  app.get('/api/v1/openapi.json', { schema: { hide: true } }, async () => app.swagger());

  await app.register(
    async (api) => {
      api.addHook('onRequest', apiAuthHook(deps.keys, deps.limiter, deps.authFailLimiter, now));
      // Per-key usage for the dashboard: counted in memory, written in batches (services/usage.ts).
      api.addHook('onResponse', async (req, reply) => {
        const k = req.apiKey;
        if (k) usage.record({ keyId: k.keyId, clinicId: k.clinicId, timezone: k.timezone, status: reply.statusCode, errorCode: req.apiErrorCode, atMs: now() });
      });
      await api.register(v1Routes, { db: deps.database.db, now });
    },
  );

  // The clinic dashboard (Settings > API): its own sessions, CSRF, HTML errors; never API keys.
  await app.register(adminPlugin, {
    prefix: '/dashboard', db: deps.database.db, keys: deps.keys, usage, config: deps.config, now,
    cookieSecure: deps.config.cookieSecure, ...deps.admin,
  });

  return app;
}
