// API-key authentication, the key's address restriction and rate limiting, run first for every
// API request (onRequest) so that a caller without a valid key learns nothing about parameters or
// data; then each route's scope (requireScope, added to each route by scopes.ts). All of it
// reads the cached key only: no database read of its own. An OAuth access token (OAUTH_ISSUER
// set) is the other kind of credential: it becomes the same principal as a key
// (services/oauth/tokens.ts), with its grant as the rate-limit bucket, and is accepted only on the
// resource it is bound to (the API or /mcp). With OAuth on, every 401 names the resource's
// metadata (RFC 9728) in its challenge, from which an app finds the authorization server.
import type { FastifyReply, FastifyRequest, onRequestHookHandler } from 'fastify';
import { SCOPE_BIT, type Scope } from '../domain/scopes.js';
import { ApiError, errors } from '../errors.js';
import type { AuthenticatedKey, KeyService } from '../services/api-keys.js';
import { resourceMetadataUrl, resourceOfPath, type OAuthResources } from '../services/oauth/resources.js';
import { isTokenShaped, type AppTokens } from '../services/oauth/tokens.js';
import { insufficientScope } from './scope-refusal.js';
import { policyHeader, stateHeader, type RateLimiter } from '../services/rate-limit.js';

declare module 'fastify' {
  interface FastifyRequest {
    apiKey: AuthenticatedKey | null;
    /**
     * The key's 429, left here instead of thrown on a route that answers it itself
     * (config.answersRateLimit: /mcp, as a tool result); null when the key is within its limit.
     */
    rateLimitRefusal: ApiError | null;
  }
  interface FastifyContextConfig {
    /** The route answers the key's rate limit itself: the hook leaves the 429 in req.rateLimitRefusal. */
    answersRateLimit?: boolean;
  }
}

const BEARER_RE = /^bearer +(\S+) *$/i;
const POLICY_NAME = 'key';

/** Which limit refused a request (for the metrics). */
export type LimitName = 'key' | 'auth_failures';

/** OAuth access tokens on the API: the token cache and the resources they are bound to. */
export interface TokenAuth {
  tokens: AppTokens;
  resources: OAuthResources;
}

/** A 401 whose challenge also names the resource's metadata (RFC 9728) and, for a bad credential, RFC 6750's error. */
export function oauthChallenge(err: ApiError, resources: OAuthResources, path: string): ApiError {
  const metadata = resourceMetadataUrl(resources, resourceOfPath(resources, path));
  const error = err.code === 'invalid_api_key' ? ', error="invalid_token"' : '';
  return new ApiError(err.code, err.message, err.param, {
    ...err.headers,
    'www-authenticate': `Bearer realm="api"${error}, resource_metadata="${metadata}"`,
  });
}

export function apiAuthHook(
  keys: KeyService,
  limiter: RateLimiter,
  authFailLimiter: RateLimiter,
  now: () => number,
  onLimited: (limit: LimitName) => void = () => {},
  oauth: TokenAuth | null = null,
) {
  const policy = policyHeader(POLICY_NAME, limiter);
  const refused = (err: ApiError, req: FastifyRequest) => (oauth ? oauthChallenge(err, oauth.resources, req.url) : err);
  return async function authenticate(req: FastifyRequest, reply: FastifyReply): Promise<void> {
    const header = req.headers.authorization;
    const ip = req.ip;
    const nowMs = now();
    const token = header === undefined ? undefined : BEARER_RE.exec(header)?.[1];

    // A key this instance verified in the last few seconds (still in its cache) passes whatever
    // its address's failed-authentication budget, so one bad integration behind a shared address
    // does not lock out the others; asked first, it costs no limiter call (with REDIS_URL, no
    // round trip to Redis: the key's own bucket below is the request's one call). The same holds
    // for an access token in the token cache. Anything else: lookUpUncached.
    let key: AuthenticatedKey | null | undefined = token ? keys.verifyCached(token) || oauth?.tokens.verifyCached(token) : null;
    if (!key) {
      const found = await lookUpUncached(token, ip, nowMs, keys, authFailLimiter, oauth);
      if (found.key === null) {
        if (found.retryAfterSeconds !== null) {
          onLimited('auth_failures');
          throw errors.authFailuresLimited(found.retryAfterSeconds);
        }
        throw refused(header === undefined ? errors.missingApiKey() : errors.invalidApiKey(), req);
      }
      key = found.key;
    }
    // A token is good for the resource it was issued for only (RFC 8707): an /mcp token is refused by the REST API and the reverse.
    const here = key.app && oauth ? resourceOfPath(oauth.resources, req.url) : null;
    if (key.app && here !== null && key.app.resource !== here) {
      const failed = await authFailLimiter.consume(ip, nowMs);
      if (!failed.allowed) {
        onLimited('auth_failures');
        throw errors.authFailuresLimited(failed.retryAfterSeconds);
      }
      const named = (url: string) => ({ name: url === oauth!.resources.mcp ? 'the MCP server' : 'the REST API', url });
      throw refused(errors.tokenForAnotherResource(named(key.app.resource), named(here)), req);
    }
    req.apiKey = key;

    // An address the key does not accept is refused before the key's budget is touched: a stolen
    // key used from elsewhere must not spend the real integration's requests. It spends the
    // address's failed-authentication budget instead, as a wrong key would. `ip` is Fastify's
    // req.ip: the socket's address, or X-Forwarded-For's as far as TRUST_PROXY trusts it.
    if (key.allowedIps !== null && !key.allowedIps.allows(ip)) {
      const failed = await authFailLimiter.consume(ip, nowMs);
      if (!failed.allowed) {
        onLimited('auth_failures');
        throw errors.authFailuresLimited(failed.retryAfterSeconds);
      }
      throw errors.ipNotAllowed(ip);
    }

    const d = await limiter.consume(key.keyId, nowMs);
    reply.header('ratelimit-policy', policy);
    reply.header('ratelimit', stateHeader(POLICY_NAME, d));
    if (!d.allowed) {
      onLimited('key');
      const refusal = errors.keyRateLimited(d.retryAfterSeconds);
      if (req.routeOptions.config.answersRateLimit !== true) throw refusal;
      req.rateLimitRefusal = refusal;
    }
  };
}

/**
 * The check of one route's scope, run after authentication (a route's own onRequest hooks run
 * after the scope's): 403 insufficient_scope when the key lacks it. One AND of the key's bits; the
 * answer says nothing about the data, whatever was asked.
 */
export function requireScope(scope: Scope, oauth: OAuthResources | null = null): onRequestHookHandler {
  const bit = SCOPE_BIT[scope];
  const metadata = oauth ? resourceMetadataUrl(oauth, oauth.api) : null;
  return function scopeCheck(req, _reply, done) {
    const k = req.apiKey;
    if (k === null || (k.scopeBits & bit) === 0) done(insufficientScope(k, { needed: [scope], subject: null, metadata }));
    else done();
  };
}

/**
 * RateLimit-Policy and RateLimit on an answer given before authentication (a 404 for an unknown
 * path, a 405) to key `k`: its state, peeked, not spent (nothing was done for it). Not for an
 * address the key does not accept: its state is the real integration's, not the caller's.
 */
export async function describeLimit(reply: FastifyReply, k: AuthenticatedKey, ip: string, limiter: RateLimiter, nowMs: number) {
  if (k.allowedIps !== null && !k.allowedIps.allows(ip)) return;
  const d = await limiter.peek(k.keyId, nowMs);
  reply.header('ratelimit-policy', policyHeader(POLICY_NAME, limiter));
  reply.header('ratelimit', stateHeader(POLICY_NAME, d));
}

/**
 * The key (or app token) a request answered before authentication carried: a 404 for an unknown
 * path and the method guard's 405 are not refused for their credential, yet the request log
 * records every request made with a known key, those too, and the answer describes its rate
 * limit. Asked once those answers are decided (the API plugin's onSend): the path of these rare
 * answers only, never of a routed one. The same rules as apiAuthHook: the caches
 * first; otherwise an address over its failed-authentication budget gets no key looked up, and a
 * credential that is no key spends that budget as a wrong key does. null: no known key.
 */
export async function principalOf(
  req: FastifyRequest,
  keys: KeyService,
  authFailLimiter: RateLimiter,
  nowMs: number,
  oauth: TokenAuth | null,
): Promise<AuthenticatedKey | null> {
  const header = req.headers.authorization;
  const token = header === undefined ? undefined : BEARER_RE.exec(header)?.[1];
  if (!token) return null;
  const cached = keys.verifyCached(token) || oauth?.tokens.verifyCached(token);
  if (cached) return cached;
  return (await lookUpUncached(token, req.ip, nowMs, keys, authFailLimiter, oauth)).key;
}

/**
 * A credential not in the caches, by the rules of every request: an address over its
 * failed-authentication budget gets nothing looked up (no guessing at speed, no database work);
 * otherwise the key or access token is verified, and a credential that is neither (or none)
 * spends the budget. `retryAfterSeconds`: the address is over its budget (a 429), else null.
 */
async function lookUpUncached(
  token: string | undefined,
  ip: string,
  nowMs: number,
  keys: KeyService,
  authFailLimiter: RateLimiter,
  oauth: TokenAuth | null,
): Promise<{ key: AuthenticatedKey; retryAfterSeconds: null } | { key: null; retryAfterSeconds: number | null }> {
  const ipState = await authFailLimiter.peek(ip, nowMs);
  if (!ipState.allowed) return { key: null, retryAfterSeconds: ipState.retryAfterSeconds };
  // Access tokens are 43 characters; a key is longer (its prefix, '_', 43 characters): one look-up either way.
  const key = !token ? null : oauth && isTokenShaped(token) ? await oauth.tokens.verify(token) : await keys.verify(token);
  if (key) return { key, retryAfterSeconds: null };
  const failed = await authFailLimiter.consume(ip, nowMs);
  return { key: null, retryAfterSeconds: failed.allowed ? null : failed.retryAfterSeconds };
}
