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

export function apiAuthHook(keys: KeyService, limiter: RateLimiter, authFailLimiter: RateLimiter, now: () => number) {
  const policy = policyHeader(POLICY_NAME, limiter);
  return async function authenticate(req: FastifyRequest, reply: FastifyReply): Promise<void> {
    const header = req.headers.authorization;
    const ip = req.ip;
    const nowMs = now();

    // An address that keeps failing is refused before its next guess is even checked.
    const ipState = await authFailLimiter.peek(ip, nowMs);
    if (!ipState.allowed) throw errors.tooManyRequests(ipState.retryAfterSeconds);

    if (header === undefined) {
      await authFailLimiter.consume(ip, nowMs);
      throw errors.missingApiKey();
    }
    const m = BEARER_RE.exec(header);
    const key = m?.[1] ? await keys.verify(m[1]) : null;
    if (!key) {
      const failed = await authFailLimiter.consume(ip, nowMs);
      if (!failed.allowed) throw errors.tooManyRequests(failed.retryAfterSeconds);
      throw errors.invalidApiKey();
    }
    req.apiKey = key;

    const d = await limiter.consume(key.keyId, nowMs);
    reply.header('ratelimit-policy', policy);
    reply.header('ratelimit', stateHeader(POLICY_NAME, d));
    if (!d.allowed) throw errors.tooManyRequests(d.retryAfterSeconds);
  };
}
