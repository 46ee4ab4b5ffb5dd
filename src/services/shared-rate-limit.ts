// Rate limiters for one instance or a fleet. Without REDIS_URL every limiter is a
// MemoryGcraLimiter (rate-limit.ts). With it, each bucket lives in Redis (redis/gcra-script.ts:
// the same GCRA, on Redis' clock), so every instance takes from one budget per key.
//
// Fail open: when Redis is down or does not answer within REDIS_TIMEOUT_MS, the decision is made
// by the limiter's in-memory twin on this instance (a fleet of N then allows up to N times the
// rate, never less), counted in `fallbacks`; the link (redis/link.ts) logs the outage once and
// goes back to Redis by itself when it answers. A request never fails because of Redis.
import type { RedisLink, RedisState } from '../redis/link.js';
import { MemoryGcraLimiter, type RateDecision, type RateLimiter } from './rate-limit.js';

/** For /readyz and /metrics: Redis' state (off: no REDIS_URL) and the decisions made without it. */
export interface LimiterHealth {
  redis: RedisState | 'off';
  /** decisions made in memory because Redis was down or slow, since start */
  fallbacks: number;
}

/** Where every shared bucket lives: `clinic-api:rl:<limiter>:<key>`. */
export const BUCKET_PREFIX = 'clinic-api:rl:';

export type LimiterClock = 'redis' | 'caller';

class SharedGcraLimiter implements RateLimiter {
  private readonly memory: MemoryGcraLimiter;
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
    private readonly clock: LimiterClock,
  ) {
    this.memory = new MemoryGcraLimiter(rate, burst);
    this.prefix = `${BUCKET_PREFIX}${name}:`;
    this.rateArg = String(rate);
    this.burstArg = String(burst);
  }

  consume(key: string, nowMs = Date.now()): Promise<RateDecision> {
    return this.decide(key, nowMs, true);
  }

  peek(key: string, nowMs = Date.now()): Promise<RateDecision> {
    return this.decide(key, nowMs, false);
  }

  // Not async: one promise (the link's) per call, and one then().
  private decide(key: string, nowMs: number, take: boolean): Promise<RateDecision> {
    return this.link.gcra(this.prefix + key, this.rateArg, this.burstArg, take, this.clock === 'caller' ? nowMs : undefined).then((r) => {
      if (r) return { allowed: r[0] === 1, limit: this.burst, remaining: r[1], resetSeconds: r[2], retryAfterSeconds: r[3] };
      this.onFallback();
      return this.memory.decide(key, nowMs, take);
    });
  }
}

/** Makes the instance's limiters, all on one Redis link (or none), and reports their health. */
export class RateLimiters {
  private fallbacks = 0;
  private readonly names = new Set<string>();

  /**
   * `clock`: 'redis' (production: Redis' TIME, whatever the instances' clocks say) or 'caller'
   * (the nowMs each call passes: the arithmetic tests' explicit clocks).
   */
  constructor(private readonly link: RedisLink | null, private readonly clock: LimiterClock = 'redis') {}

  /** A limiter of `rate` requests/s with bursts of `burst`; `name` keeps its buckets apart from the others'. */
  make(name: string, rate: number, burst: number): RateLimiter {
    if (!/^[a-z][a-z0-9-]*$/.test(name) || this.names.has(name)) throw new Error(`limiter name "${name}" is invalid or already used`);
    this.names.add(name);
    if (!this.link) return new MemoryGcraLimiter(rate, burst);
    return new SharedGcraLimiter(this.link, name, rate, burst, () => { this.fallbacks++; }, this.clock);
  }

  health(): LimiterHealth {
    return { redis: this.link ? this.link.state : 'off', fallbacks: this.fallbacks };
  }
}
