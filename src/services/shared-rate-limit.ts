// Rate limiters for one instance or a fleet. Without REDIS_URL every limiter is a
// MemoryGcraLimiter (rate-limit.ts). With it, each bucket lives in Redis (redis/gcra-script.ts:
// the same GCRA, on Redis' clock), so every instance takes from one budget per key.
//
// Each instance also keeps its view of the shared buckets it uses: the bucket as Redis last
// reported it, plus what the instance let through since (the in-memory twin, adopted from every
// reply). A round trip to Redis costs an instance about as much CPU as the rest of a cheap
// request (a second wake-up per request), so a request whose key is far from its limit is
// decided on that view, and Redis is told afterwards, in one call per key every FLUSH_MS, or at
// once when the key's untold requests reach half the instance's share (below):
//  - only while Redis answered for that key within FRESH_MS, the view says the bucket stays at
//    least half full after the request, and the requests the instance let through that Redis has
//    not counted yet (untold, or in a call not answered) are fewer than its share; otherwise the
//    request waits for Redis, which first adds the requests let through on the view (`charge`),
//    then decides;
//  - the share is a tenth of the burst divided among the instances alive: each instance says it
//    is alive every FLEET_BEAT_MS (a sorted set in Redis, FLEET_KEY) and learns how many are;
//    until it knows, its share is 0. Requests let through on views and not yet counted by Redis
//    are what a fleet can let through beyond the bucket, so together they stay within a tenth of
//    the burst (an instance that stopped is still counted for FLEET_WINDOW_MS: smaller shares, never more);
//  - so near its limit every decision is Redis' own (429s and Retry-After are exact), every
//    request is charged to the shared bucket (the long-run rate is exact), and a fleet lets
//    through at most a tenth of the burst more than the burst, once, before the bucket is half
//    empty and every instance asks Redis. Small buckets (burst < LOCAL_MIN_BURST: the sign-in
//    throttles) are always decided in Redis, and so is every bucket of a fleet so large that a
//    share would be under one request.
//  - RateLimit's remaining on a decision made locally is the view's: the shared bucket as Redis
//    last reported it (at most FRESH_MS ago), less this instance's requests since; other
//    instances' requests reach it within FLUSH_MS of being told, so it may miss those of about
//    the last FRESH_MS + FLUSH_MS.
//  - FLUSH_MS is a quarter of a second because every flush wakes the process twice (its timer,
//    then Redis' reply), and on a virtual machine a wake-up costs more than the call: measured
//    on /me at 300 requests/s, telling Redis every 50 ms cost 10% more CPU than limits in memory,
//    every 250 ms 2% (docs/benchmarks.md). How late Redis learns of a request does not change
//    what a fleet can let through, which the share bounds; and a busy key does not wait for the
//    timer: at half its share it is told at once, so that it seldom reaches the share and has to
//    wait for Redis.
//
// Fail open: when Redis is down or does not answer within REDIS_TIMEOUT_MS, the decision is made
// by the in-memory twin on this instance, which starts from the shared bucket as Redis last
// reported it (a fleet of N then allows up to N times the rate while the outage lasts, never
// less), counted in `fallbacks`; the link (redis/link.ts) logs the outage once and goes back to
// Redis by itself when it answers. A request never fails because of Redis.
import { randomUUID } from 'node:crypto';
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

/** How often the requests let through on the view are told to Redis (one call per key; sooner for a busy key). */
export const FLUSH_MS = 250;
/** A view older than this (no answer from Redis for the key since) decides nothing. */
export const FRESH_MS = 1_000;
/** Below this burst every decision is Redis' (a tenth of the burst would be under 2 requests). */
export const LOCAL_MIN_BURST = 20;
/** Views kept at most; beyond, the stale ones are dropped (bounded memory whatever the keys). */
const MAX_VIEWS = 50_000;
/** The instances alive: a sorted set of their ids, scored by when each last said so. */
export const FLEET_KEY = 'clinic-api:instances';
/** How often an instance says it is alive (and learns how many are). */
export const FLEET_BEAT_MS = 1_000;
/** An instance not heard of for this long is no longer counted. */
export const FLEET_WINDOW_MS = 5_000;

/** How many instances share the buckets, as last learnt from Redis; 0 until known. */
type FleetSize = () => number;

/** What the instance knows of one shared bucket beyond the twin's TAT. */
interface View {
  /** performance.now() of Redis' last answer for this key */
  syncedAt: number;
  /** requests let through on the view since Redis was last told */
  unsynced: number;
  /** requests told to Redis in calls not answered yet: not in the bucket Redis last reported, nor in `unsynced` */
  telling: number;
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
  /** whether a view may decide at all (burst >= LOCAL_MIN_BURST) */
  private readonly local: boolean;
  private flushTimer: NodeJS.Timeout | null = null;

  constructor(
    private readonly link: RedisLink,
    name: string,
    readonly rate: number,
    readonly burst: number,
    private readonly onFallback: () => void,
    private readonly clock: LimiterClock,
    private readonly fleetSize: FleetSize,
    private readonly flushMs: number,
  ) {
    this.memory = new MemoryGcraLimiter(rate, burst);
    this.prefix = `${BUCKET_PREFIX}${name}:`;
    this.rateArg = String(rate);
    this.burstArg = String(burst);
    this.local = burst >= LOCAL_MIN_BURST;
  }

  /** Requests this instance may let through on a view before it tells Redis: a tenth of the burst, shared among the instances. */
  private share(): number {
    const n = this.fleetSize();
    return this.local && n > 0 ? Math.floor(this.burst / 10 / n) : 0;
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
    const share = this.share();
    if (view === undefined || view.asking > 0 || view.unsynced + view.telling >= share || this.link.state !== 'up') return null;
    if (performance.now() - view.syncedAt > FRESH_MS) return null;
    // remaining after this request, were it taken: the bucket must stay at least half full
    if (this.memory.decide(key, nowMs, false).remaining - 1 < this.burst / 2) return null;
    const d = this.memory.decide(key, nowMs, true);
    view.unsynced++;
    view.lastNowMs = nowMs;
    if (view.unsynced * 2 >= share) this.tell(key, view);
    else {
      this.untold.add(key);
      this.flushSoon();
    }
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

  /**
   * Redis' bucket after a call, plus what this instance let through on its view meanwhile: untold,
   * or told in later calls not answered yet (Redis answers one link's calls in order, so an
   * earlier call's requests are in this answer and no longer in `telling`).
   */
  private adopt(key: string, nowMs: number, lead: string): void {
    let view = this.views.get(key);
    if (view === undefined) {
      if (!this.local) return this.memory.adopt(key, nowMs, Number(lead));
      if (this.views.size >= MAX_VIEWS) this.dropStaleViews();
      view = { syncedAt: 0, unsynced: 0, telling: 0, asking: 0, lastNowMs: nowMs };
      this.views.set(key, view);
    }
    view.syncedAt = performance.now();
    this.memory.adopt(key, nowMs, Number(lead) + view.unsynced + view.telling);
  }

  private flushSoon(): void {
    if (this.flushTimer) return;
    this.flushTimer = setTimeout(() => {
      this.flushTimer = null;
      this.flush();
    }, this.flushMs);
    // Exit does not wait for it, nor for calls in flight: up to a share of requests per key go
    // uncounted, as in an outage.
    this.flushTimer.unref();
  }

  /**
   * Tells Redis what was let through on the views: one call per key that has any (pipelined by
   * the client), not a pass over every view.
   */
  private flush(): void {
    for (const key of this.untold) {
      const view = this.views.get(key);
      // cleared, or told since (by a decision, or at half its share)
      if (view !== undefined && view.unsynced > 0) this.tell(key, view);
    }
    this.untold.clear();
  }

  /** One call that adds the requests let through on `key`'s view since Redis was last told; not awaited. */
  private tell(key: string, view: View): void {
    const charge = view.unsynced;
    view.unsynced = 0;
    view.telling += charge;
    const nowMs = this.clock === 'caller' ? view.lastNowMs : Date.now();
    void this.ask(key, nowMs, false, charge).then((r) => {
      view.telling -= charge;
      // No answer (Redis down): those requests stay in the twin, which decides until Redis is back.
      if (r) this.adopt(key, nowMs, r[4]);
    });
  }

  /**
   * At MAX_VIEWS: drops the views that decide nothing any more (Redis' answer stale), then, if
   * that is not enough, every view with nothing pending. A view with requests untold, told and
   * unanswered, or a decision asked is kept whatever its age: dropping it would lose those
   * requests from the bucket and from the share. Those are the keys used within the last flush,
   * so memory stays bounded by the request rate.
   */
  private dropStaleViews(): void {
    const now = performance.now();
    const idle = (v: View) => v.unsynced === 0 && v.telling === 0 && v.asking === 0;
    for (const [key, view] of this.views) if (idle(view) && now - view.syncedAt > FRESH_MS) this.views.delete(key);
    if (this.views.size >= MAX_VIEWS) for (const [key, view] of this.views) if (idle(view)) this.views.delete(key);
  }
}

/** Makes the instance's limiters, all on one Redis link (or none), and reports their health. */
export class RateLimiters {
  private fallbacks = 0;
  private readonly names = new Set<string>();
  /** this instance's id in FLEET_KEY */
  private readonly member = randomUUID();
  /** instances alive, this one included, as Redis last said; 0 until it has */
  private instances = 0;
  private beat: NodeJS.Timeout | null = null;

  /**
   * `clock`: 'redis' (production: Redis' TIME, whatever the instances' clocks say) or 'caller'
   * (the nowMs each call passes: the arithmetic tests' explicit clocks). `flushMs`: FLUSH_MS,
   * but for tests that must tell a busy key's early call from the timer's.
   */
  constructor(
    private readonly link: RedisLink | null,
    private readonly clock: LimiterClock = 'redis',
    private readonly flushMs = FLUSH_MS,
  ) {}

  /** A limiter of `rate` requests/s with bursts of `burst`; `name` keeps its buckets apart from the others'. */
  make(name: string, rate: number, burst: number): RateLimiter {
    if (!/^[a-z][a-z0-9-]*$/.test(name) || this.names.has(name)) throw new Error(`limiter name "${name}" is invalid or already used`);
    this.names.add(name);
    if (!this.link) return new MemoryGcraLimiter(rate, burst);
    this.startBeat(this.link);
    return new SharedGcraLimiter(
      this.link,
      name,
      rate,
      burst,
      () => {
        this.fallbacks++;
      },
      this.clock,
      () => this.instances,
      this.flushMs,
    );
  }

  /** Instances alive that share the buckets, this one included, as last learnt from Redis (0: not yet). */
  fleetSize(): number {
    return this.instances;
  }

  health(): LimiterHealth {
    return { redis: this.link ? this.link.state : 'off', fallbacks: this.fallbacks };
  }

  /** Stops saying this instance is alive (it drops out of the count FLEET_WINDOW_MS later). */
  stop(): void {
    if (this.beat) clearInterval(this.beat);
    this.beat = null;
  }

  /** Says every FLEET_BEAT_MS that this instance is alive, and learns how many are: the first time at once. */
  private startBeat(link: RedisLink): void {
    if (this.beat) return;
    const once = (): void => {
      void link.fleetSize(FLEET_KEY, this.member, Date.now(), FLEET_WINDOW_MS).then((n) => {
        // No answer: the count stands (while Redis is down no view decides anyway).
        if (n !== null) this.instances = n;
      });
    };
    once();
    this.beat = setInterval(once, FLEET_BEAT_MS);
    this.beat.unref();
  }
}
