// GCRA (the "virtual scheduling" form of a token bucket): a sustained rate with a burst, in one
// number per key (the theoretical arrival time, TAT). The common Node limiters count fixed
// windows, which cannot say "60/s sustained, bursts of 120"; the limiter below is ~45 lines of
// code with exact arithmetic tests. The interface is async so a Redis backend can implement it unchanged.

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

// Time is counted in emission intervals ("ticks" of 1/rate s), so every request adds exactly 1 to
// a key's TAT: an exact float operation at any clock magnitude. (Adding 1000/60 ms to an epoch-ms
// TAT rounds at every step, and at today's Date.now() only 119 of a burst of 120 passed.)
// The slack absorbs the rounding of `now` itself: a few ulps of its magnitude, far below a tick.
const EPSILON_TICKS = 1e-9;
const RELATIVE_SLACK = 1e-15;

export class MemoryGcraLimiter implements RateLimiter {
  /** TAT per key, in ticks */
  private readonly tats = new Map<string, number>();
  private lastSweep = 0;

  constructor(
    readonly rate: number,
    readonly burst: number,
  ) {}

  async consume(key: string, nowMs = Date.now()): Promise<RateDecision> {
    return this.decide(key, nowMs, true);
  }

  async peek(key: string, nowMs = Date.now()): Promise<RateDecision> {
    return this.decide(key, nowMs, false);
  }

  /** Synchronous core, also used directly by the arithmetic tests. */
  decide(key: string, nowMs: number, take: boolean): RateDecision {
    const now = (nowMs * this.rate) / 1000;
    const eps = EPSILON_TICKS + Math.abs(now) * RELATIVE_SLACK;
    this.sweep(nowMs, now);
    const tat = Math.max(this.tats.get(key) ?? now, now);
    const next = tat + 1;
    if (next - now > this.burst + eps) {
      return {
        allowed: false,
        limit: this.burst,
        remaining: 0,
        resetSeconds: Math.max(1, this.seconds(tat - now, eps)),
        retryAfterSeconds: Math.max(1, this.seconds(next - this.burst - now, eps)),
      };
    }
    const after = take ? next : tat;
    if (take) this.tats.set(key, next);
    return {
      allowed: true,
      limit: this.burst,
      remaining: Math.max(0, Math.floor(this.burst - (after - now) + eps)),
      resetSeconds: this.seconds(after - now, eps),
      retryAfterSeconds: 0,
    };
  }

  /**
   * Makes `key`'s bucket the one Redis holds: its TAT `leadTicks` ahead of `nowMs` (the shared
   * limiter's twin of a fleet's bucket, services/shared-rate-limit.ts). A lead of 0 or less is a
   * full bucket.
   */
  adopt(key: string, nowMs: number, leadTicks: number): void {
    const now = (nowMs * this.rate) / 1000;
    // Swept here too: a twin that only adopts (Redis decides) would otherwise keep every key.
    this.sweep(nowMs, now);
    if (leadTicks > 0) this.tats.set(key, now + leadTicks);
    else this.tats.delete(key);
  }

  /** Whole seconds (rounded up) that `ticks` intervals take. */
  private seconds(ticks: number, eps: number): number {
    return Math.max(0, Math.ceil((ticks - eps) / this.rate));
  }

  /** Drops keys whose TAT has passed: they are indistinguishable from new ones. Bounded memory. */
  private sweep(nowMs: number, now: number): void {
    if (nowMs - this.lastSweep < 10_000) return;
    this.lastSweep = nowMs;
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
