// Rate limiters for one instance or a fleet. Without REDIS_URL every limiter is a
// MemoryGcraLimiter (rate-limit.ts). With it, each bucket lives in Redis (redis/scripts.ts, gcra:
// the same GCRA on Redis' clock), so every instance takes from one budget per key: every
// decision is one call of the script.
//
// Fail open: when Redis is down or does not answer within REDIS_TIMEOUT_MS, the limiter's
// in-memory twin decides. The twin holds each bucket as Redis last reported it, so a key at its
// limit stays there during an outage, and a key Redis never reported on starts full (a fleet of N
// allows up to N times the rate while the outage lasts, never less). Those decisions are counted
// (`fallbacks`); the link (redis/link.ts) reports the outage once and goes back to Redis by itself
// when it answers. A request never fails because of Redis.
import type { RedisLink, RedisState } from '../redis/link.js';
import type { GcraReply } from '../redis/scripts.js';
import { MemoryGcraLimiter, type RateDecision, type RateLimiter } from './rate-limit.js';

/** For /readyz and /metrics: Redis' state (off: no REDIS_URL) and the decisions made without it. */
export interface LimiterHealth {
  redis: RedisState | 'off';
  /** decisions made in memory because Redis was down or slow, since start */
  fallbacks: number;
}

/** Where every shared bucket lives: `clinic-api:rl:<limiter>:<key>`. */
export const BUCKET_PREFIX = 'clinic-api:rl:';

/** A limiter whose buckets are in Redis, with a twin in memory for when Redis does not answer. */
export class RedisGcraLimiter implements RateLimiter {
  /** the buckets as Redis last reported them */
  readonly twin: MemoryGcraLimiter;
  private readonly prefix: string;
  /** the script's arguments, as strings once rather than per call */
  private readonly rateArg: string;
  private readonly burstArg: string;

  constructor(
    private readonly link: RedisLink,
    name: string,
    readonly rate: number,
    readonly burst: number,
    private readonly onFallback: () => void,
  ) {
    this.twin = new MemoryGcraLimiter(rate, burst);
    this.prefix = `${BUCKET_PREFIX}${name}:`;
    this.rateArg = String(rate);
    this.burstArg = String(burst);
  }

  consume(key: string, nowMs = Date.now()): Promise<RateDecision> {
    return this.ask(key, true).then((r) => this.decision(key, nowMs, true, r));
  }

  peek(key: string, nowMs = Date.now()): Promise<RateDecision> {
    return this.ask(key, false).then((r) => this.decision(key, nowMs, false, r));
  }

  /** The script on Redis for `key`: its reply, or null when Redis did not answer. */
  private ask(key: string, take: boolean): Promise<GcraReply | null> {
    return this.link.call((c) => c.gcra(this.prefix + key, this.rateArg, this.burstArg, take)) as Promise<GcraReply | null>;
  }

  /** Redis' decision, the twin taking the bucket from it; the twin's own decision when Redis did not answer. */
  private decision(key: string, nowMs: number, take: boolean, reply: GcraReply | null): RateDecision {
    if (reply === null) {
      this.onFallback();
      return this.twin.decide(key, nowMs, take);
    }
    this.twin.adopt(key, nowMs, Number(reply[4]));
    return { allowed: reply[0] === 1, limit: this.burst, remaining: reply[1], resetSeconds: reply[2], retryAfterSeconds: reply[3] };
  }
}

/** Makes the instance's limiters, all on one Redis link (or none), and reports their health. */
export class RateLimiters {
  private fallbacks = 0;
  private readonly names = new Set<string>();

  constructor(private readonly link: RedisLink | null) {}

  /** A limiter of `rate` requests/s with bursts of `burst`; `name` keeps its buckets apart from the others'. */
  make(name: string, rate: number, burst: number): RateLimiter {
    if (!/^[a-z][a-z0-9-]*$/.test(name) || this.names.has(name)) throw new Error(`limiter name "${name}" is invalid or already used`);
    this.names.add(name);
    if (!this.link) return new MemoryGcraLimiter(rate, burst);
    return new RedisGcraLimiter(this.link, name, rate, burst, () => {
      this.fallbacks++;
    });
  }

  health(): LimiterHealth {
    return { redis: this.link ? this.link.state : 'off', fallbacks: this.fallbacks };
  }
}
