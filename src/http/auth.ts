// API-key authentication, the key's address restriction and rate limiting, run first for every
// API request (onRequest) so that a caller without a valid key learns nothing about parameters or
// data; then each route's scope (requireScope, added to each route by scopes.ts). All of it
// reads the cached key only: no database read of its own.
import type { FastifyReply, FastifyRequest, onRequestHookHandler } from 'fastify';
import { SCOPE_BIT, type Scope } from '../domain/scopes.js';
import { errors } from '../errors.js';
import type { AuthenticatedKey, KeyService } from '../services/api-keys.js';
import { policyHeader, stateHeader, type RateLimiter } from '../services/rate-limit.js';

declare module 'fastify' {
  interface FastifyRequest {
    apiKey: AuthenticatedKey | null;
  }
}

const BEARER_RE = /^bearer +(\S+) *$/i;
const POLICY_NAME = 'key';

/** Which limit refused a request (for the metrics). */
export type LimitName = 'key' | 'auth_failures';

export function apiAuthHook(
  keys: KeyService,
  limiter: RateLimiter,
  authFailLimiter: RateLimiter,
  now: () => number,
  onLimited: (limit: LimitName) => void = () => {},
) {
  const policy = policyHeader(POLICY_NAME, limiter);
  return async function authenticate(req: FastifyRequest, reply: FastifyReply): Promise<void> {
    const header = req.headers.authorization;
    const ip = req.ip;
    const nowMs = now();
    const token = header === undefined ? undefined : BEARER_RE.exec(header)?.[1];

    // A key this instance verified in the last few seconds (still in its cache) passes whatever
    // its address's failed-authentication budget, so one bad integration behind a shared address
    // does not lock out the others; asked first, it costs no limiter call (with REDIS_URL, no
    // round trip to Redis: the key's own bucket below is the request's one call).
    let key: AuthenticatedKey | null | undefined = token ? keys.verifyCached(token) : null;
    if (!key) {
      // An address over its budget gets no new key checked: no guessing at speed, no database work.
      const ipState = await authFailLimiter.peek(ip, nowMs);
      if (!ipState.allowed) {
        onLimited('auth_failures');
        throw errors.tooManyRequests(ipState.retryAfterSeconds);
      }
      key = token ? await keys.verify(token) : null;
      if (!key) {
        const failed = await authFailLimiter.consume(ip, nowMs);
        if (!failed.allowed) {
          onLimited('auth_failures');
          throw errors.tooManyRequests(failed.retryAfterSeconds);
        }
        throw header === undefined ? errors.missingApiKey() : errors.invalidApiKey();
      }
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
        throw errors.tooManyRequests(failed.retryAfterSeconds);
      }
      throw errors.ipNotAllowed(ip);
    }

    const d = await limiter.consume(key.keyId, nowMs);
    reply.header('ratelimit-policy', policy);
    reply.header('ratelimit', stateHeader(POLICY_NAME, d));
    if (!d.allowed) {
      onLimited('key');
      throw errors.tooManyRequests(d.retryAfterSeconds);
    }
  };
}

/**
 * The check of one route's scope, run after authentication (a route's own onRequest hooks run
 * after the scope's): 403 insufficient_scope when the key lacks it. One AND of the key's bits; the
 * answer says nothing about the data, whatever was asked.
 */
export function requireScope(scope: Scope): onRequestHookHandler {
  const bit = SCOPE_BIT[scope];
  return function scopeCheck(req, _reply, done) {
    const k = req.apiKey;
    if (k === null || (k.scopeBits & bit) === 0) done(errors.insufficientScope(scope));
    else done();
  };
}
