// API-key authentication and rate limiting, run first for every API request (onRequest) so that
// a caller without a valid key learns nothing about parameters or data.
import type { FastifyReply, FastifyRequest } from 'fastify';
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
  keys: KeyService, limiter: RateLimiter, authFailLimiter: RateLimiter, now: () => number,
  onLimited: (limit: LimitName) => void = () => {},
) {
  const policy = policyHeader(POLICY_NAME, limiter);
  return async function authenticate(req: FastifyRequest, reply: FastifyReply): Promise<void> {
    const header = req.headers.authorization;
    const ip = req.ip;
    const nowMs = now();
    const token = header === undefined ? undefined : BEARER_RE.exec(header)?.[1];

    // An address over its failed-authentication budget gets no new key checked (no guessing at
    // speed, no database work), but a key already verified on this instance keeps working, so
    // one bad integration behind a shared address does not lock out the others.
    const ipState = await authFailLimiter.peek(ip, nowMs);
    let key: AuthenticatedKey | null;
    if (!ipState.allowed) {
      key = token ? keys.verifyCached(token) ?? null : null;
      if (!key) {
        onLimited('auth_failures');
        throw errors.tooManyRequests(ipState.retryAfterSeconds);
      }
    } else {
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
      throw errors.tooManyRequests(d.retryAfterSeconds);
    }
  };
}
