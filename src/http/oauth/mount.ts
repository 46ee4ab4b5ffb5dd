// The OAuth authorization server's HTTP side (OAUTH_ISSUER set): oidc-provider's endpoints (a Koa
// app, services/oauth/server.ts) mounted under /oauth, its metadata at the root
// (/.well-known/oauth-authorization-server, RFC 8414; /.well-known/openid-configuration, which
// some clients ask for first), and the protected resources' metadata (RFC 9728) of the API and
// of /mcp, which every 401 names (../auth.ts). Registration and the token endpoint are limited
// per client address (429 with Retry-After) before the provider sees the request.
//
// The provider reads the raw request itself: this scope parses no body, and each request is
// handed over whole (reply.hijack()); the headers the app's hooks set (X-Request-Id, nosniff...)
// are copied onto the raw response first. Fastify's view of the protocol, host and address
// (TRUST_PROXY) is the one the provider sees: the X-Forwarded-* headers are overwritten from it.
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
  tokenLimiter: RateLimiter;
  now: () => number;
}

type Callback = ReturnType<AuthorizationServer['provider']['callback']>;

function handOver(req: FastifyRequest, reply: FastifyReply, callback: Callback): void {
  reply.hijack();
  const raw = req.raw;
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

/** The per-address limits: registration, and the token and revocation endpoints. */
function limit(opts: OAuthMountOptions) {
  return async function oauthLimits(req: FastifyRequest, reply: FastifyReply) {
    if (req.method !== 'POST') return;
    const path = (req.raw.url ?? '').split('?')[0];
    const limiter =
      path === `${OAUTH_PREFIX}/reg` ? opts.registrationLimiter : path?.startsWith(`${OAUTH_PREFIX}/token`) ? opts.tokenLimiter : null;
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
