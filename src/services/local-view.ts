// The instance's local view of shared buckets, for the API key's limiter (every API request).
// Asking Redis costs a cheap request about as much CPU again (a second wake-up of the process per
// request; docs/benchmarks.md, "Rate limits on Redis"), and most keys are far from their limit.
//
//  - The view of a bucket is the limiter's twin (the bucket as Redis last reported it) plus the
//    requests this instance let through since. A request is decided on it, and Redis told after
//    (one call per key every FLUSH_MS, adding them as the script's `charge`), only while: Redis
//    answered for that key within FRESH_MS, no decision for it waits for Redis, the bucket stays
//    at least half full after the request, and this instance's requests that Redis has not
//    counted yet are fewer than its share. Otherwise the request waits for Redis, which adds
//    the charge and decides.
//  - The share is a tenth of the burst divided among the instances alive (Fleet below); 0 until
//    known. Requests let through on views and not counted by Redis yet are all a fleet can let
//    through beyond a bucket (a view made stale by other instances still says "half full"), so
//    together they stay within a tenth of the burst, whatever the fleet's size.
//  - So near its limit every decision is Redis' own (429s and Retry-After exact), every request is
//    charged to the shared bucket (the long-run rate is exact), and small buckets (burst under
//    LOCAL_MIN_BURST) always ask Redis. RateLimit's `r` on a local decision is the view's: it may
//    miss other instances' requests of about the last FRESH_MS + FLUSH_MS.
//  - Why FLUSH_MS is 250 ms: each flush wakes the process twice (its timer, then Redis' reply);
//    at 300 requests/s on /me, telling Redis every 50 ms cost 10% more CPU than limits in memory,
//    every 250 ms 2%. An instance that exits may leave up to its share of a key uncounted.
import { randomUUID } from 'node:crypto';
import type { RedisLink } from '../redis/link.js';
import type { RateDecision, RateLimiter } from './rate-limit.js';
import type { RedisGcraLimiter } from './shared-rate-limit.js';

/** How often the requests let through on a view are told to Redis (one call per key). */
export const FLUSH_MS = 250;
/** A view older than this (no answer from Redis for the key since) decides nothing. */
export const FRESH_MS = 1_000;
/** Below this burst every decision is Redis' (a tenth of the burst would be under 2 requests). */
export const LOCAL_MIN_BURST = 20;
/** Views kept at most; beyond, the idle ones are dropped (bounded memory whatever the keys). */
const MAX_VIEWS = 50_000;
/** The instances alive: a sorted set of their ids, scored by when each last said so (Redis' clock). */
export const FLEET_KEY = 'clinic-api:instances';
/** How often an instance says it is alive (and learns how many are). */
export const FLEET_BEAT_MS = 1_000;
/** An instance not heard of for this long is no longer counted: smaller shares meanwhile, never larger. */
export const FLEET_WINDOW_MS = 5_000;

/** What the instance knows of one bucket beyond the twin's. */
interface View {
  /** performance.now() of Redis' last answer for this key */
  syncedAt: number;
  /** requests let through on the view and not told to Redis yet */
  untold: number;
  /** requests told to Redis in calls not answered yet */
  telling: number;
  /** decisions asked of Redis and not answered yet: the view decides nothing meanwhile */
  asking: number;
}

/** How many instances share the buckets: each says it is alive every FLEET_BEAT_MS and learns the count. */
export class Fleet {
  /** this one included, as Redis last said; 0 until it has */
  size = 0;
  private readonly member = randomUUID();
  private readonly beat: NodeJS.Timeout;

  constructor(link: RedisLink) {
    const once = (): void => {
      // No answer: the count stands (while Redis is down no view decides anyway).
      void link
        .call((c) => c.fleetBeat(FLEET_KEY, this.member, FLEET_WINDOW_MS))
        .then((n) => {
          if (n !== null) this.size = n;
        });
    };
    once();
    this.beat = setInterval(once, FLEET_BEAT_MS).unref();
  }

  stop(): void {
    clearInterval(this.beat);
  }
}

export class LocalView implements RateLimiter {
  readonly rate: number;
  readonly burst: number;
  private readonly views = new Map<string, View>();
  /** keys with requests untold: what the next flush sends */
  private readonly due = new Set<string>();
  private flushTimer: NodeJS.Timeout | null = null;

  constructor(
    private readonly shared: RedisGcraLimiter,
    private readonly link: RedisLink,
    private readonly fleet: Fleet,
  ) {
    this.rate = shared.rate;
    this.burst = shared.burst;
  }

  consume(key: string, nowMs = Date.now()): Promise<RateDecision> {
    return this.onView(key, nowMs) ?? this.ask(key, nowMs, true);
  }

  peek(key: string, nowMs = Date.now()): Promise<RateDecision> {
    return this.ask(key, nowMs, false);
  }

  /** Requests this instance may let through on views before Redis counts them: a tenth of the burst, shared. */
  private share(): number {
    return this.burst >= LOCAL_MIN_BURST && this.fleet.size > 0 ? Math.floor(this.burst / 10 / this.fleet.size) : 0;
  }

  /** The decision on the view, when the rules at the top of this file allow one; else null. */
  private onView(key: string, nowMs: number): Promise<RateDecision> | null {
    const view = this.views.get(key);
    if (view === undefined || view.asking > 0 || view.untold + view.telling >= this.share() || this.link.state !== 'up') return null;
    if (performance.now() - view.syncedAt > FRESH_MS) return null;
    // what is left after this request, were it taken: the bucket must stay at least half full
    if (this.shared.twin.decide(key, nowMs, false).remaining - 1 < this.burst / 2) return null;
    view.untold++;
    this.due.add(key);
    this.flushTimer ??= setTimeout(() => this.flush(), FLUSH_MS).unref();
    return Promise.resolve(this.shared.twin.decide(key, nowMs, true));
  }

  /** Redis' decision, adding the view's untold requests first. */
  private ask(key: string, nowMs: number, take: boolean): Promise<RateDecision> {
    const view = this.views.get(key);
    const charge = view?.untold ?? 0;
    if (view) {
      view.untold = 0;
      view.asking++;
    }
    return this.shared.ask(key, take, charge).then((r) => {
      if (view) view.asking--;
      const since = r === null ? 0 : this.synced(key);
      return this.shared.decision(key, nowMs, take, r, since);
    });
  }

  /** Redis answered for `key`: its view is fresh; the requests let through on it since the call was sent. */
  private synced(key: string): number {
    let view = this.views.get(key);
    if (view === undefined) {
      if (this.views.size >= MAX_VIEWS) this.dropIdle();
      this.views.set(key, (view = { syncedAt: 0, untold: 0, telling: 0, asking: 0 }));
    }
    view.syncedAt = performance.now();
    // Redis answers one link's calls in order: the requests of calls sent earlier are in its
    // answer, those of later calls (telling) and those not told yet are not.
    return view.untold + view.telling;
  }

  /** Tells Redis what was let through on the views: one call per key that has any (pipelined by the client). */
  private flush(): void {
    this.flushTimer = null;
    for (const key of this.due) {
      const view = this.views.get(key);
      // told since by a decision asked of Redis, or dropped
      if (view === undefined || view.untold === 0) continue;
      const charge = view.untold;
      view.untold = 0;
      view.telling += charge;
      const nowMs = Date.now();
      void this.shared.ask(key, false, charge).then((r) => {
        view.telling -= charge;
        // No answer (Redis down): those requests stay in the twin, which decides until Redis is back.
        if (r !== null) this.shared.twin.adopt(key, nowMs, Number(r[4]) + this.synced(key));
      });
    }
    this.due.clear();
  }

  /**
   * At MAX_VIEWS: drops the views with nothing pending (untold, told and unanswered, or a decision
   * asked: dropping those would lose requests from the bucket and from the share), stale ones
   * first. Memory stays bounded by the keys in use within a flush.
   */
  private dropIdle(): void {
    const now = performance.now();
    const idle = (v: View) => v.untold === 0 && v.telling === 0 && v.asking === 0;
    for (const [key, v] of this.views) if (idle(v) && now - v.syncedAt > FRESH_MS) this.views.delete(key);
    if (this.views.size >= MAX_VIEWS) for (const [key, v] of this.views) if (idle(v)) this.views.delete(key);
  }
}
