// Failing open, in one process, on a real redis-server that is killed, restarted, frozen
// (SIGSTOP) and thawed: every decision is made at once (in memory while Redis is away) and
// counted, the outage is reported once however many calls fail, and the limiters go back to
// Redis by themselves when it answers. The same faults under HTTP traffic on a real server
// process: fail-open.test.ts.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createClient } from 'redis';
import { RedisLink, type RedisState } from '../../src/redis/link.js';
import { quietOutages } from '../../src/redis/outages.js';
import type { RateDecision, RateLimiter } from '../../src/services/rate-limit.js';
import { RateLimiters } from '../../src/services/shared-rate-limit.js';
import { redisAvailable, startRedis, type RedisServer } from '../helpers/redis.js';
import { until } from '../helpers/wait.js';

const runs = redisAvailable('failing open on Redis (test/fleet/redis-link.test.ts)');

describe.skipIf(!runs)('RedisLink and the shared limiters when Redis goes away', () => {
  let redis: RedisServer;
  const links: RedisLink[] = [];

  beforeAll(async () => {
    redis = await startRedis();
  });
  afterEach(async () => {
    for (const l of links.splice(0)) await l.close();
    redis.thaw();
    await redis.start(); // running again for the next test
  });
  afterAll(async () => {
    await redis?.close();
  });

  /** A started link with a record of what it reported (`quiet`: through quietOutages, as the server logs it), and limiters on it. */
  async function linked(opts: { quiet?: boolean } = {}) {
    const events: [RedisState, string | null][] = [];
    const record = (s: RedisState, r: string | null) => events.push([s, r]);
    // 50 ms of silence: generous for a shared test machine, short beside the test's waits.
    const link = new RedisLink({ url: redis.url, timeoutMs: 50, onStateChange: opts.quiet ? quietOutages(record) : record });
    links.push(link);
    expect(await link.waitUp(10_000)).toBe(true);
    return { link, events, limiters: new RateLimiters(link) };
  }

  const take = (l: RateLimiter, n: number, key = 'k'): Promise<RateDecision[]> =>
    Promise.all(Array.from({ length: n }, () => l.consume(key)));
  const allowed = (ds: RateDecision[]) => ds.filter((d) => d.allowed).length;

  it('killed: decisions fall back to memory at once and are counted; reported once; back on Redis when it returns', async () => {
    const { link, events, limiters } = await linked();
    // One request a minute, bursts of 3: time does not refill anything during the test.
    const l = limiters.make('killed', 1 / 60, 3);
    expect(allowed(await take(l, 4))).toBe(3);
    expect(limiters.health()).toEqual({ redis: 'up', fallbacks: 0 });
    expect(events.map(([s]) => s)).toEqual(['up']);

    await redis.kill();
    await until(() => link.state === 'down', 'the link to notice');
    // The in-memory twin goes on from the shared bucket as Redis last reported it: empty, so
    // nothing more passes for this key (before, a fresh bucket let a whole burst through again).
    expect(allowed(await take(l, 5))).toBe(0);
    // A key Redis never reported on starts full: this instance's share of the outage.
    expect(allowed(await take(l, 5, 'other'))).toBe(3);
    // Many more calls, and the client's reconnection attempts, report nothing more.
    for (let i = 0; i < 20; i++) await take(l, 5);
    const during = limiters.health();
    expect(during.redis).toBe('down');
    expect(during.fallbacks).toBeGreaterThanOrEqual(110);
    expect(events.map(([s]) => s)).toEqual(['up', 'down']);
    expect(events[1]![1]).toMatch(/closed|ECONNREFUSED|offline/i);

    await redis.start();
    await until(() => link.state === 'up', 'Redis to be used again');
    expect(events.map(([s]) => s)).toEqual(['up', 'down', 'up']);
    // Back on Redis: a restarted, empty Redis, so a fresh shared bucket; nothing falls back.
    const before = limiters.health().fallbacks;
    expect(allowed(await take(l, 4))).toBe(3);
    expect(limiters.health()).toEqual({ redis: 'up', fallbacks: before });
    const raw = createClient({ url: redis.url });
    await raw.connect();
    try {
      expect(await raw.exists('clinic-api:rl:killed:k')).toBe(1);
    } finally {
      raw.destroy();
    }
  });

  it('frozen (SIGSTOP): calls give up after the timeout instead of waiting; thawed, Redis is used again', async () => {
    const { link, events, limiters } = await linked();
    const l = limiters.make('frozen', 1 / 60, 3);
    expect(allowed(await take(l, 1))).toBe(1);
    redis.freeze();
    // These resolve while Redis is still frozen (the test would hang here otherwise).
    const ds = await take(l, 10);
    // The twin holds the request Redis answered for: 2 of the 3 are left.
    expect(allowed(ds)).toBe(2);
    expect(link.state).toBe('down');
    expect(limiters.health().fallbacks).toBe(10);
    // While down, nothing is sent: later calls decide at once.
    expect(allowed(await take(l, 5, 'other'))).toBe(3);
    expect(limiters.health().fallbacks).toBe(15);
    expect(events.map(([s]) => s)).toEqual(['up', 'down']);
    expect(events[1]![1]).toBe('no answer within 50 ms');

    redis.thaw();
    await until(() => link.state === 'up', 'Redis to be used again');
    // The shared bucket still holds the one request taken before the freeze (and whatever
    // calls reached Redis as it froze): no more than 2 of 3 are left.
    expect(allowed(await take(l, 3))).toBeLessThanOrEqual(2);
    expect(limiters.health().fallbacks).toBe(15);
    expect(events.map(([s]) => s)).toEqual(['up', 'down', 'up']);
  });

  it('every change is reported once; logged through quietOutages, an outage soon after another is not (a flapping Redis does not fill the log)', async () => {
    const all = await linked();
    const logged = await linked({ quiet: true });
    const both = (state: RedisState) => all.link.state === state && logged.link.state === state;
    for (let i = 0; i < 2; i++) {
      await redis.kill();
      await until(() => both('down'), `outage ${i + 1}`);
      await redis.start();
      await until(() => both('up'), `recovery ${i + 1}`);
    }
    expect(all.events.map(([s]) => s)).toEqual(['up', 'down', 'up', 'down', 'up']);
    // The second outage began within a minute of the first: neither it nor its end is logged.
    // (That one outlasting the quiet time is logged then, with the count: test/unit/redis-outages.test.ts.)
    expect(logged.events.map(([s]) => s)).toEqual(['up', 'down', 'up']);
  });

  it('a Redis that lost the script (SCRIPT FLUSH) is sent it whole: the decision is still made in Redis, nothing falls back', async () => {
    const { limiters, events } = await linked();
    const l = limiters.make('noscript', 1 / 60, 2);
    expect((await l.consume('k')).remaining).toBe(1);
    const raw = createClient({ url: redis.url });
    await raw.connect();
    try {
      await raw.scriptFlush();
      // Taken in Redis: the bucket's second request, not a fresh in-memory one.
      const d = await l.consume('k');
      expect(d).toMatchObject({ allowed: true, remaining: 0 });
      expect((await l.consume('k')).allowed).toBe(false);
      expect(limiters.health()).toEqual({ redis: 'up', fallbacks: 0 });
      expect(events.map(([s]) => s)).toEqual(['up']);
    } finally {
      raw.destroy();
    }
  });

  it("publishing: false at once from a running link while Redis is down; a CLI's link connects first, within its budget", async () => {
    const { link } = await linked();
    expect(await link.publish('clinic-api:test', 'hello', 2_000)).toBe(true);
    await redis.kill();
    await until(() => link.state === 'down', 'the link to notice');
    expect(await link.publish('clinic-api:test', 'hello', 60_000)).toBe(false);
    // A link never started (the CLI's) waits for a connection, up to its budget.
    const cli = new RedisLink({ url: redis.url, timeoutMs: 50 });
    links.push(cli);
    expect(await cli.publish('clinic-api:test', 'hello', 300)).toBe(false);
    await redis.start();
    const cli2 = new RedisLink({ url: redis.url, timeoutMs: 50 });
    links.push(cli2);
    expect(await cli2.publish('clinic-api:test', 'hello', 10_000)).toBe(true);
  });
});
