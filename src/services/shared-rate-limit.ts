// Rate limiters for one instance or a fleet. Without REDIS_URL every limiter is a
// MemoryGcraLimiter (rate-limit.ts). With it, each bucket lives in Redis (redis/gcra-script.ts:
// the same GCRA, on Redis' clock), so every instance takes from one budget per key.
//
// Each instance also keeps its view of the shared buckets it uses: the bucket as Redis last
// reported it, plus what the instance let through since (the in-memory twin, adopted from every
// reply). A round trip to Redis costs an instance about as much CPU as the rest of a cheap
// request (a second wake-up per request), so a request whose key is far from its limit is
// decided on that view, and Redis is told afterwards, in one call per key every FLUSH_MS:
//  - only while Redis answered for that key within FRESH_MS, the view says the bucket stays at
//    least half full after the request, and the instance has let through less than a tenth of
//    the burst since it last told Redis; otherwise the request waits for Redis, which first adds
//    the requests let through on the view (`charge`), then decides;
//  - so near its limit every decision is Redis' own (429s and Retry-After are exact), every
//    request is charged to the shared bucket (the long-run rate is exact), and a fleet of N
//    instances can let through at most N x burst/10 more than the burst, once, before the
//    bucket is half empty and every instance asks Redis. Small buckets (burst < LOCAL_MIN_BURST:
//    the sign-in throttles) are always decided in Redis.
//  - RateLimit's remaining on a decision made locally is the view's: the shared bucket as of at
//    most FLUSH_MS ago, less this instance's requests.
//
// Fail open: when Redis is down or does not answer within REDIS_TIMEOUT_MS, the decision is made
// by the in-memory twin on this instance, which starts from the shared bucket as Redis last
// reported it (a fleet of N then allows up to N times the rate while the outage lasts, never
// less), counted in `fallbacks`; the link (redis/link.ts) logs the outage once and goes back to
// Redis by itself when it answers. A request never fails because of Redis.
import type { GcraReply } from '../redis/gcra-script.js';
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

/** How often the requests let through on the view are told to Redis (one call per key). */
export const FLUSH_MS = 50;
/** A view older than this (no answer from Redis for the key since) decides nothing. */
export const FRESH_MS = 1_000;
/** Below this burst every decision is Redis' (a tenth of the burst would be under 2 requests). */
export const LOCAL_MIN_BURST = 20;
/** Views kept at most; beyond, the stale ones are dropped (bounded memory whatever the keys). */
const MAX_VIEWS = 50_000;

/** What the instance knows of one shared bucket beyond the twin's TAT. */
interface View {
  /** performance.now() of Redis' last answer for this key */
  syncedAt: number;
  /** requests let through on the view since Redis was last told */
  unsynced: number;
  /** decisions asked of Redis and not answered yet: the view does not hold them, so it decides nothing meanwhile */
  asking: number;
  /** the caller's clock at the last decision (the flush's `now` with the caller's clock) */
  lastNowMs: number;
}

class SharedGcraLimiter implements RateLimiter {
  private readonly memory: MemoryGcraLimiter;
  private readonly prefix: string;
  /** the script's arguments, as strings once rather than per call */
  private readonly rateArg: string;
  private readonly burstArg: string;
  private readonly views = new Map<string, View>();
  /** keys with requests let through on the view and not told to Redis yet: what the next flush sends */
  private readonly untold = new Set<string>();
  /** requests let through on the view, per flush, at most (0: never on the view) */
  private readonly localShare: number;
  private flushTimer: NodeJS.Timeout | null = null;

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
    this.localShare = burst >= LOCAL_MIN_BURST ? Math.floor(burst / 10) : 0;
  }

  consume(key: string, nowMs = Date.now()): Promise<RateDecision> {
    const local = this.onView(key, nowMs);
    return local ? Promise.resolve(local) : this.decide(key, nowMs, true);
  }

  peek(key: string, nowMs = Date.now()): Promise<RateDecision> {
    return this.decide(key, nowMs, false);
  }

  /** The decision on the instance's view, when the rules at the top of this file allow one; else null. */
  private onView(key: string, nowMs: number): RateDecision | null {
    const view = this.views.get(key);
    if (view === undefined || view.asking > 0 || view.unsynced >= this.localShare || this.link.state !== 'up') return null;
    if (performance.now() - view.syncedAt > FRESH_MS) return null;
    // remaining after this request, were it taken: the bucket must stay at least half full
    if (this.memory.decide(key, nowMs, false).remaining - 1 < this.burst / 2) return null;
    const d = this.memory.decide(key, nowMs, true);
    view.unsynced++;
    view.lastNowMs = nowMs;
    this.untold.add(key);
    this.flushSoon();
    return d;
  }

  /** The script on Redis for `key`, adding `charge` first; null when Redis did not answer. */
  private ask(key: string, nowMs: number, take: boolean, charge: number): Promise<GcraReply | null> {
    return this.link.gcra(this.prefix + key, this.rateArg, this.burstArg, take, this.clock === 'caller' ? nowMs : undefined, charge);
  }

  // Not async: one promise (the link's) per call, and one then().
  private decide(key: string, nowMs: number, take: boolean): Promise<RateDecision> {
    const view = this.views.get(key);
    const charge = view ? view.unsynced : 0;
    if (view) {
      view.unsynced = 0;
      view.asking++;
    }
    return this.ask(key, nowMs, take, charge).then((r) => {
      if (view) view.asking--;
      if (r) {
        this.adopt(key, nowMs, r[4]);
        return { allowed: r[0] === 1, limit: this.burst, remaining: r[1], resetSeconds: r[2], retryAfterSeconds: r[3] };
      }
      this.onFallback();
      return this.memory.decide(key, nowMs, take);
    });
  }

  /** Redis' bucket after a call, plus what this instance let through on its view meanwhile. */
  private adopt(key: string, nowMs: number, lead: string): void {
    let view = this.views.get(key);
    if (view === undefined) {
      if (this.localShare === 0) return this.memory.adopt(key, nowMs, Number(lead));
      if (this.views.size >= MAX_VIEWS) this.dropStaleViews();
      view = { syncedAt: 0, unsynced: 0, asking: 0, lastNowMs: nowMs };
      this.views.set(key, view);
    }
    view.syncedAt = performance.now();
    this.memory.adopt(key, nowMs, Number(lead) + view.unsynced);
  }

  private flushSoon(): void {
    if (this.flushTimer) return;
    this.flushTimer = setTimeout(() => {
      this.flushTimer = null;
      this.flush();
    }, FLUSH_MS);
    // Exit does not wait for it: at most FLUSH_MS of requests go untold, the same as an outage.
    this.flushTimer.unref();
  }

  /**
   * Tells Redis what was let through on the views: one call per key that has any (pipelined by
   * the client), not a pass over every view.
   */
  private flush(): void {
    for (const key of this.untold) {
      const view = this.views.get(key);
      if (view === undefined || view.unsynced === 0) continue; // cleared, or told by a decision since
      const charge = view.unsynced;
      view.unsynced = 0;
      const nowMs = this.clock === 'caller' ? view.lastNowMs : Date.now();
      void this.ask(key, nowMs, false, charge).then((r) => {
        // No answer (Redis down): those requests stay in the twin, which decides until Redis is back.
        if (r) this.adopt(key, nowMs, r[4]);
      });
    }
    this.untold.clear();
  }

  /** At MAX_VIEWS: drops the views that decide nothing any more (nothing untold or asked, Redis' answer stale). */
  private dropStaleViews(): void {
    const now = performance.now();
    for (const [key, view] of this.views) if (view.unsynced === 0 && view.asking === 0 && now - view.syncedAt > FRESH_MS) this.views.delete(key);
    if (this.views.size >= MAX_VIEWS) this.views.clear();
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
