// API-key authentication and rate limiting, run first for every API request (onRequest) so that
// a caller without a valid key learns nothing about parameters or data.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { errors, type ApiError } from '../errors.js';
import type { AuthenticatedKey, KeyService } from '../services/api-keys.js';
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

    const d = await limiter.consume(key.keyId, nowMs);
    reply.header('ratelimit-policy', policy);
    reply.header('ratelimit', stateHeader(POLICY_NAME, d));
    if (!d.allowed) {
      onLimited('key');
      const refusal = errors.tooManyRequests(d.retryAfterSeconds);
      if (req.routeOptions.config.answersRateLimit !== true) throw refusal;
      req.rateLimitRefusal = refusal;
    }
  };
}
