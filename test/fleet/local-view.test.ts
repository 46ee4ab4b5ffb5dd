// The shared limiter's local view (src/services/shared-rate-limit.ts), on a real redis-server:
// far from its limit a key is decided on the instance's view and Redis is told afterwards, in one
// call per key per FLUSH_MS; near its limit every decision is Redis' own; every request is
// charged to the shared bucket; small buckets always ask Redis; and what the instances let through
// on views, uncounted, stays within a tenth of the burst however many they are (each learns from
// Redis how many are alive). Each link stands for an instance. Rates are one request per 1000 s,
// so nothing refills while a test runs.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient } from 'redis';
import { RedisLink } from '../../src/redis/link.js';
import type { RateLimiter } from '../../src/services/rate-limit.js';
import { LOCAL_MIN_BURST } from '../../src/services/local-view.js';
import { RateLimiters } from '../../src/services/shared-rate-limit.js';
import { gcraCalls } from '../../tools/redis-server.js';
import { redisAvailable, startRedis, type RedisServer } from '../helpers/redis.js';
import { until } from '../helpers/wait.js';

const runs = redisAvailable("the shared limiter's local view (test/fleet/local-view.test.ts)");
const SLOW = 0.001;

describe.skipIf(!runs)("the shared limiter's local view of a bucket", () => {
  let redis: RedisServer;
  let raw: ReturnType<typeof createClient>;
  const links: RedisLink[] = [];
  let made = 0;

  beforeAll(async () => {
    redis = await startRedis();
    raw = createClient({ url: redis.url });
    await raw.connect();
  });
  afterAll(async () => {
    for (const l of links) await l.close();
    raw?.destroy();
    await redis?.close();
  });

  /** An "instance": its own link and limiters. */
  async function instance(): Promise<RateLimiters> {
    const link = new RedisLink({ url: redis.url, timeoutMs: 5_000 });
    links.push(link);
    expect(await link.waitUp(10_000)).toBe(true);
    return new RateLimiters(link);
  }

  /** The API key's kind of limiter: with a local view. */
  const VIEW = { localView: true };

  /** The requests a key's shared bucket holds, by its TAT's lead (at SLOW nothing refills). */
  async function counted(name: string): Promise<number> {
    return Math.round(Number(await raw.get(`clinic-api:rl:${name}:k`)) - (Date.now() * SLOW) / 1000);
  }

  /** An instance's share of a burst of 1,000 (a tenth, divided among the instances alive), once it knows how many are. */
  async function shareOf(fleet: RateLimiters): Promise<number> {
    await until(() => fleet.fleetSize() > 0, 'the instance to learn how many are alive', 5_000);
    return Math.floor(1_000 / 10 / fleet.fleetSize());
  }

  /** The GCRA script's calls so far, from Redis' own statistics. */
  async function scriptCalls(): Promise<number> {
    return gcraCalls(await raw.info('commandstats'));
  }

  /** `n` requests one after the other (each awaited, as requests arriving one at a time). */
  async function oneByOne(l: RateLimiter, n: number, key = 'k'): Promise<boolean[]> {
    const out: boolean[] = [];
    for (let i = 0; i < n; i++) out.push((await l.consume(key)).allowed);
    return out;
  }

  it('far from the limit, requests are decided on the view and told to Redis afterwards, all of them', async () => {
    const fleet = await instance();
    const name = `view${++made}`;
    const l = fleet.make(name, SLOW, 1_000, VIEW);
    const before = await scriptCalls();
    const ds = [];
    for (let i = 0; i < 40; i++) ds.push(await l.consume('k'));
    expect(ds.every((d) => d.allowed)).toBe(true);
    // What the view says is the bucket's: one fewer each time.
    expect(ds.map((d) => d.remaining)).toEqual(Array.from({ length: 40 }, (_, i) => 999 - i));
    await until(async () => (await counted(name)) === 40, 'Redis to count the 40 requests', 5_000);
    const calls = (await scriptCalls()) - before;
    // A tenth of the burst (100) per flush: the first request asks, the next 39 go on the view,
    // and their flush is one call. Without the view, 40 calls.
    expect(calls).toBeLessThanOrEqual(4);
    // Every request is in the shared bucket: another instance sees 40 taken.
    const other = (await instance()).make(name, SLOW, 1_000, VIEW);
    expect((await other.peek('k')).remaining).toBe(960);
    expect(fleet.health()).toEqual({ redis: 'up', fallbacks: 0 });
  });

  it('what a view lets through at once stays within the share, also when requests come faster than Redis answers', async () => {
    const fleet = await instance();
    const name = `rush${++made}`;
    const l = fleet.make(name, SLOW, 1_000, VIEW);
    expect((await l.consume('k')).allowed).toBe(true);
    const share = await shareOf(fleet);
    // 300 requests in one go: those decided on the view are answered before any I/O, the others
    // wait for Redis. The calls told early are in flight meanwhile, and still count against the share.
    let settled = 0;
    const all = Array.from({ length: 300 }, () =>
      l.consume('k').then((d) => {
        settled++;
        return d.allowed;
      }),
    );
    for (let i = 0; i < 10; i++) await Promise.resolve();
    expect(settled).toBe(share);
    expect((await Promise.all(all)).every(Boolean)).toBe(true);
    // Every one is in the shared bucket, with no flush waited for.
    expect(await counted(name)).toBe(301);
  });

  it("near the limit every decision is Redis': exactly the burst passes, across two instances", async () => {
    const name = `near${++made}`;
    const a = (await instance()).make(name, SLOW, 100, VIEW);
    const b = (await instance()).make(name, SLOW, 100, VIEW);
    const results: boolean[] = [];
    for (let i = 0; i < 150; i++) results.push(...(await oneByOne(i % 2 === 0 ? a : b, 1)));
    const allowed = results.filter(Boolean).length;
    // What the instances let through on views, untold, is a tenth of the burst among them, and
    // only while a view is at least half full; each is charged. The fleet's bound: burst + 10, once.
    expect(allowed).toBeGreaterThanOrEqual(100);
    expect(allowed).toBeLessThanOrEqual(110);
    // Once empty, both refuse, and Redis holds every request let through.
    expect((await a.consume('k')).allowed).toBe(false);
    expect((await b.consume('k')).allowed).toBe(false);
    // The TAT leads by the requests charged (in ticks, one per request), at SLOW: none refilled.
    await until(async () => (await counted(name)) === allowed, `Redis to count the ${allowed} requests let through`, 5_000);
  });

  it("views made stale by other instances let through at most a tenth of the burst beyond it, whatever the fleet's size", async () => {
    const name = `stale${++made}`;
    const fleets = [await instance(), await instance(), await instance()];
    const [a, b, c] = fleets.map((f) => f.make(name, SLOW, 100, VIEW)) as [RateLimiter, RateLimiter, RateLimiter];
    await until(() => fleets.every((f) => f.fleetSize() >= 3), 'every instance to learn that three are alive', 5_000);
    // Each instance gets its view of the fresh bucket: one request each, decided by Redis.
    let allowed = 0;
    for (const l of [a, b, c]) if ((await l.consume('k')).allowed) allowed++;
    // A alone empties the bucket (on its view, then through Redis near the limit) until refused.
    while ((await a.consume('k')).allowed) allowed++;
    // B and C still hold views from before that, milliseconds old: fresh by the clock, wrong in
    // fact. Each lets through its share on them before it asks Redis, which refuses.
    for (const l of [b, c]) for (let i = 0; i < 20; i++) if ((await l.consume('k')).allowed) allowed++;
    expect(allowed).toBeGreaterThanOrEqual(100);
    // A tenth of the burst to each instance would have been 100 + 2 x 10; it is shared instead.
    expect(allowed).toBeLessThanOrEqual(110);
    expect(allowed - 100).toBeLessThanOrEqual(2 * Math.floor(100 / 10 / Math.min(...fleets.map((f) => f.fleetSize()))));
  });

  it('one instance alone: the burst passes to the request, then a refusal with Retry-After from Redis', async () => {
    const name = `alone${++made}`;
    const l = (await instance()).make(name, SLOW, 100, VIEW);
    const results = await oneByOne(l, 100);
    expect(results.every(Boolean)).toBe(true);
    const refused = await l.consume('k');
    expect(refused).toMatchObject({ allowed: false, remaining: 0 });
    expect(refused.retryAfterSeconds).toBeGreaterThan(990);
  });

  it(`small buckets (burst under ${LOCAL_MIN_BURST}: the sign-in throttles) always ask Redis`, async () => {
    const l = (await instance()).make(`small${++made}`, SLOW, LOCAL_MIN_BURST - 1, VIEW);
    const before = await scriptCalls();
    await oneByOne(l, 10);
    expect((await scriptCalls()) - before).toBe(10);
  });
});
