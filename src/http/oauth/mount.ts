// The OAuth authorization server's HTTP side (OAUTH_ISSUER set): oidc-provider's endpoints (a Koa
// app, services/oauth/server.ts) mounted under /oauth, its metadata at the root
// (/.well-known/oauth-authorization-server, RFC 8414; /.well-known/openid-configuration, which
// some clients ask for first), and the protected resources' metadata (RFC 9728) of the API and
// of /mcp, which every 401 names (../auth.ts). Registration, the authorization endpoint and the
// token endpoint are limited per client address (429 with Retry-After) before the provider sees
// the request. A token request's `resource` is checked here before the provider uses up its code
// or refresh token (AuthorizationServer.targetProblem); the body read for that is handed on as is.
//
// The provider reads the raw request itself: this scope parses no body, and each request is
// handed over whole (reply.hijack()); the headers the app's hooks set (X-Request-Id, nosniff...)
// are copied onto the raw response first. Fastify's view of the protocol, host and address
// (TRUST_PROXY) is the one the provider sees: the X-Forwarded-* headers are overwritten from it.
import { IncomingMessage } from 'node:http';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { SCOPES } from '../../domain/scopes.js';
import { errors } from '../../errors.js';
import type { RateLimiter } from '../../services/rate-limit.js';
import { resourceMetadataUrl } from '../../services/oauth/resources.js';
import { OAUTH_PREFIX } from '../../services/oauth/resources.js';
import type { AuthorizationServer } from '../../services/oauth/server.js';

export interface OAuthMountOptions {
  server: AuthorizationServer;
  registrationLimiter: RateLimiter;
  /** the authorization endpoint (and its resume after consent) */
  authorizationLimiter: RateLimiter;
  tokenLimiter: RateLimiter;
  now: () => number;
}

type Callback = ReturnType<AuthorizationServer['provider']['callback']>;

/** The provider's own limit on a request body (oidc-provider's selective_body). */
const BODY_LIMIT = 56 * 1024;

/** The request again, its body already read: what the provider reads is the same request. */
function replayed(raw: IncomingMessage, body: Buffer): IncomingMessage {
  const copy = new IncomingMessage(raw.socket);
  Object.assign(copy, {
    method: raw.method,
    url: raw.url,
    headers: raw.headers,
    rawHeaders: raw.rawHeaders,
    httpVersion: raw.httpVersion,
    httpVersionMajor: raw.httpVersionMajor,
    httpVersionMinor: raw.httpVersionMinor,
    // The whole body is there: without this, the copy's end would count as an aborted request and close the connection.
    complete: true,
  });
  copy.push(body);
  copy.push(null);
  return copy;
}

/** A token request's body and its form (null when not a form), or null when larger than the provider accepts. */
async function readForm(raw: IncomingMessage): Promise<{ body: Buffer; form: URLSearchParams | null } | null> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of raw.iterator({ destroyOnReturn: false })) {
    size += (chunk as Buffer).length;
    if (size > BODY_LIMIT) return null;
    chunks.push(chunk as Buffer);
  }
  const body = Buffer.concat(chunks);
  const form = /^application\/x-www-form-urlencoded\b/i.test(raw.headers['content-type'] ?? '');
  return { body, form: form ? new URLSearchParams(body.toString('utf8')) : null };
}

function handOver(req: FastifyRequest, reply: FastifyReply, callback: Callback, body?: Buffer): void {
  reply.hijack();
  const raw = body === undefined ? req.raw : replayed(req.raw, body);
  for (const [name, value] of Object.entries(reply.getHeaders())) if (value !== undefined) reply.raw.setHeader(name, value);
  raw.headers['x-forwarded-proto'] = req.protocol;
  raw.headers['x-forwarded-host'] = req.host;
  raw.headers['x-forwarded-for'] = req.ip;
  // oidc-provider takes its mount path from originalUrl minus url.
  const url = raw.url ?? '/';
  (raw as typeof raw & { originalUrl?: string }).originalUrl = url.startsWith(OAUTH_PREFIX) ? url : OAUTH_PREFIX + url;
  if (url.startsWith(OAUTH_PREFIX)) raw.url = url.slice(OAUTH_PREFIX.length) || '/';
  void callback(raw, reply.raw);
}

/** The token endpoint: `resource` checked before the provider consumes anything. */
async function tokenRequest(server: AuthorizationServer, req: FastifyRequest, reply: FastifyReply, callback: Callback) {
  const read = await readForm(req.raw);
  const refuse = (error: string, description: string) =>
    reply.code(400).header('cache-control', 'no-store').send({ error, error_description: description });
  if (!read) return refuse('invalid_request', `the request body is larger than ${BODY_LIMIT / 1024} KB`);
  const problem = read.form ? await server.targetProblem(read.form) : null;
  if (problem) return refuse('invalid_target', problem);
  handOver(req, reply, callback, read.body);
}

/** The limiter of a request to the provider, or null: registration, authorization (and its resume), token and revocation. */
function limiterOf(opts: OAuthMountOptions, method: string, path: string): RateLimiter | null {
  // Each authorization request is stored until answered (10 minutes): limited like the others.
  if (path === `${OAUTH_PREFIX}/auth` || path.startsWith(`${OAUTH_PREFIX}/auth/`)) return opts.authorizationLimiter;
  if (method !== 'POST') return null;
  if (path === `${OAUTH_PREFIX}/reg`) return opts.registrationLimiter;
  if (path.startsWith(`${OAUTH_PREFIX}/token`)) return opts.tokenLimiter;
  return null;
}

/** The per-address limits. */
function limit(opts: OAuthMountOptions) {
  return async function oauthLimits(req: FastifyRequest, reply: FastifyReply) {
    const limiter = limiterOf(opts, req.method, (req.raw.url ?? '').split('?')[0] ?? '');
    if (!limiter) return;
    const d = await limiter.consume(req.ip, opts.now());
    if (d.allowed) return;
    const retry = errors.tooManyRequests(d.retryAfterSeconds).headers['retry-after'] ?? String(d.retryAfterSeconds);
    // RFC 6749's error shape, which OAuth clients read.
    return reply
      .code(429)
      .header('retry-after', retry)
      .header('cache-control', 'no-store')
      .send({
        error: 'temporarily_unavailable',
        error_description: `too many requests from this address; retry after ${retry} seconds`,
      });
  };
}

export const oauthRoutes = fp(
  async (app: FastifyInstance, opts: OAuthMountOptions) => {
    const { server } = opts;
    const callback = server.provider.callback();
    const resources = server.resources;

    await app.register(async (scope) => {
      scope.removeAllContentTypeParsers();
      scope.addContentTypeParser('*', (_req, _payload, done) => done(null));
      scope.addHook('preHandler', limit(opts));
      const pass = (req: FastifyRequest, reply: FastifyReply) => handOver(req, reply, callback);
      scope.post(`${OAUTH_PREFIX}/token`, { schema: { hide: true } }, (req, reply) => tokenRequest(server, req, reply, callback));
      scope.all(OAUTH_PREFIX, { schema: { hide: true } }, pass);
      scope.all(`${OAUTH_PREFIX}/*`, { schema: { hide: true } }, pass);
      for (const path of ['/.well-known/oauth-authorization-server', '/.well-known/openid-configuration'])
        scope.get(path, { schema: { hide: true } }, pass);
    });

    const metadata = (resource: string, name: string) => ({
      resource,
      authorization_servers: [resources.issuer],
      scopes_supported: [...SCOPES],
      bearer_methods_supported: ['header'],
      resource_name: name,
      resource_documentation: `${resources.issuer}/docs`,
    });
    const prm = [
      [resources.api, 'clinic-api REST API'],
      [resources.mcp, 'clinic-api MCP server'],
    ] as const;
    for (const [resource, name] of prm) {
      const path = new URL(resourceMetadataUrl(resources, resource)).pathname;
      app.get(path, { schema: { hide: true } }, async (_req, reply) => {
        reply.header('cache-control', 'public, max-age=3600');
        reply.header('access-control-allow-origin', '*');
        return metadata(resource, name);
      });
    }
  },
  { name: 'oauth' },
);
