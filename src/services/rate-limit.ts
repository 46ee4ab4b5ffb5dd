// GCRA (the "virtual scheduling" form of a token bucket): a sustained rate with a burst, in one
// number per key (the theoretical arrival time, TAT). The common Node limiters count fixed
// windows, which cannot say "60/s sustained, bursts of 120"; this is ~40 lines with exact
// arithmetic tests. The interface is async so a Redis backend can implement it unchanged.

export interface RateDecision {
  allowed: boolean;
  /** the burst size (the policy's quota) */
  limit: number;
  /** requests that could be made right now after this one */
  remaining: number;
  /** seconds until the bucket is full again */
  resetSeconds: number;
  /** whole seconds to wait before retrying (>= 1) when not allowed, else 0 */
  retryAfterSeconds: number;
}

export interface RateLimiter {
  readonly rate: number;
  readonly burst: number;
  /** Takes one request from `key`'s allowance. */
  consume(key: string, nowMs?: number): Promise<RateDecision>;
  /** Reports `key`'s state without taking anything. */
  peek(key: string, nowMs?: number): Promise<RateDecision>;
}

// Float slack so that exactly `burst` requests at one instant all pass despite 1000/60 rounding.
const EPSILON_MS = 1e-6;

export class MemoryGcraLimiter implements RateLimiter {
  private readonly interval: number;
  private readonly tolerance: number;
  private readonly tats = new Map<string, number>();
  private lastSweep = 0;

  constructor(readonly rate: number, readonly burst: number) {
    this.interval = 1000 / rate;
    this.tolerance = burst * this.interval;
  }

  async consume(key: string, nowMs = Date.now()): Promise<RateDecision> {
    return this.decide(key, nowMs, true);
  }

  async peek(key: string, nowMs = Date.now()): Promise<RateDecision> {
    return this.decide(key, nowMs, false);
  }

  /** Synchronous core, also used directly by the arithmetic tests. */
  decide(key: string, now: number, take: boolean): RateDecision {
    this.sweep(now);
    const tat = Math.max(this.tats.get(key) ?? now, now);
    const next = tat + this.interval;
    if (next - now > this.tolerance + EPSILON_MS) {
      return {
        allowed: false,
        limit: this.burst,
        remaining: 0,
        resetSeconds: Math.max(1, Math.ceil((tat - now) / 1000)),
        retryAfterSeconds: Math.max(1, Math.ceil((next - this.tolerance - now) / 1000)),
      };
    }
    const after = take ? next : tat;
    if (take) this.tats.set(key, next);
    return {
      allowed: true,
      limit: this.burst,
      remaining: Math.max(0, Math.floor((this.tolerance - (after - now) + EPSILON_MS) / this.interval)),
      resetSeconds: Math.ceil((after - now) / 1000),
      retryAfterSeconds: 0,
    };
  }

  /** Drops keys whose TAT has passed: they are indistinguishable from new ones. Bounded memory. */
  private sweep(now: number): void {
    if (now - this.lastSweep < 10_000) return;
    this.lastSweep = now;
    for (const [k, tat] of this.tats) if (tat <= now) this.tats.delete(k);
  }
}

/** `RateLimit-Policy` / `RateLimit` values (draft-ietf-httpapi-ratelimit-headers, structured fields). */
export function policyHeader(name: string, limiter: RateLimiter): string {
  return `"${name}";q=${limiter.burst};w=${Math.max(1, Math.ceil(limiter.burst / limiter.rate))}`;
}

export function stateHeader(name: string, d: RateDecision): string {
  return `"${name}";r=${d.remaining};t=${d.resetSeconds}`;
}
