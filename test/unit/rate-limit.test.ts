// GCRA arithmetic (60 requests per second sustained, bursts of 120), with explicit
// clocks, run against both implementations: the in-memory limiter (MemoryGcraLimiter) and the
// shared limiter's Lua script on a real redis-server (src/redis/scripts.ts, GCRA, given the same
// clock instead of Redis' own): one table, the same decisions to the last field. Every scenario runs at a small
// clock (0) and at real epoch-millisecond clocks, because floating-point rounding depends on the
// clock's magnitude and production uses Date.now().
//
// The numbers, worked out: one "interval" is 1/60 s. A request is allowed while the key's
// theoretical arrival time (TAT, pushed one interval further by each allowed request) stays within
// burst x interval = 2 s of now.
//  - 120 at one instant: the 120th puts TAT exactly 2 s ahead (allowed); the 121st would be 2 s +
//    one interval ahead, so it waits one interval (16.7 ms): Retry-After 1 s.
//  - 59/s: the gap between requests (1/59 s) exceeds the interval, so TAT never runs ahead of now
//    by more than one interval: every request passes with 119 left.
//  - 61/s from a fresh key: after n requests TAT is n/60 s, request n arrives at (n-1)/61 s, and it
//    is refused when n/60 - (n-1)/61 > 2, i.e. n > 7260: the 7261st request, 119.0 s in. After
//    that exactly 60 of every 61 pass.
//  - 60/s after a full burst: TAT stays exactly 2 s ahead; every request passes, none to spare.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, defineScript, type CommandParser } from 'redis';
import { RedisLink } from '../../src/redis/link.js';
import { GCRA, type GcraReply } from '../../src/redis/scripts.js';
import { MemoryGcraLimiter, policyHeader, stateHeader, type RateDecision } from '../../src/services/rate-limit.js';
import { RateLimiters } from '../../src/services/shared-rate-limit.js';
import { redisAvailable, startRedis, type RedisServer } from '../helpers/redis.js';

const BASES = [0, Date.UTC(2026, 2, 28, 12, 0, 0), 1_800_000_000_123];

/** One limiter under test, with the caller's clock. */
interface Limiter {
  decide(key: string, at: number, take: boolean): Promise<RateDecision>;
  /** Decisions for `ats` in order, as fast as the limiter takes them (Redis: pipelined). */
  many(key: string, ats: number[], take: boolean): Promise<RateDecision[]>;
}

function memory(rate: number, burst: number): Limiter {
  const l = new MemoryGcraLimiter(rate, burst);
  return {
    decide: async (key, at, take) => l.decide(key, at, take),
    many: async (key, ats, take) => ats.map((at) => l.decide(key, at, take)),
  };
}

/**
 * The service's GCRA script, the same source, given the table's clock (its ARGV[4], which the
 * service never sends) instead of Redis' TIME; rate and burst as the service's limiter sends them.
 */
const GCRA_AT = defineScript({
  SCRIPT: GCRA.SCRIPT,
  NUMBER_OF_KEYS: 1,
  parseCommand(parser: CommandParser, key: string, rate: number, burst: number, take: boolean, nowMs: number) {
    parser.pushKey(key);
    parser.push(String(rate), String(burst), take ? '1' : '0', String(nowMs));
  },
  transformReply: (reply: unknown) => reply as GcraReply,
});

function connectRaw(url: string) {
  return createClient({ url, scripts: { gcraAt: GCRA_AT } });
}

/** The script on Redis: one fresh set of buckets per limiter made (a name of its own). */
function shared(client: ReturnType<typeof connectRaw>, name: string, rate: number, burst: number): Limiter {
  const one = async (key: string, at: number, take: boolean): Promise<RateDecision> => {
    const r = (await client.gcraAt(`${name}:${key}`, rate, burst, take, at)) as GcraReply;
    return { allowed: r[0] === 1, limit: burst, remaining: r[1], resetSeconds: r[2], retryAfterSeconds: r[3] };
  };
  return {
    decide: one,
    // Issued in order on one connection: Redis runs them in that order.
    many: (key, ats, take) => Promise.all(ats.map((at) => one(key, at, take))),
  };
}

/** `count` requests spaced evenly at `perSecond` starting at `start` ms; their decisions. */
function stream(l: Limiter, key: string, start: number, perSecond: number, count: number): Promise<RateDecision[]> {
  return l.many(
    key,
    Array.from({ length: count }, (_, i) => start + (i * 1000) / perSecond),
    true,
  );
}

function burst(l: Limiter, key: string, at: number, count: number): Promise<RateDecision[]> {
  return l.many(
    key,
    Array.from({ length: count }, () => at),
    true,
  );
}

const withRedis = redisAvailable('the GCRA table on Redis (test/unit/rate-limit.test.ts)');
let redis: RedisServer | null = null;
let raw: ReturnType<typeof connectRaw> | null = null;
let link: RedisLink | null = null;
let made = 0;

beforeAll(async () => {
  if (!withRedis) return;
  redis = await startRedis();
  raw = connectRaw(redis.url);
  await raw.connect();
  // For the limiters on Redis' clock (below). A generous timeout: no call may fall back to
  // memory, or those tests would not be testing Redis at all.
  link = new RedisLink({ url: redis.url, timeoutMs: 5_000 });
  expect(await link.waitUp(5_000)).toBe(true);
});
afterAll(async () => {
  raw?.destroy();
  await link?.close();
  await redis?.close();
});

const SUBJECTS: [string, (rate: number, burst: number) => Limiter][] = [
  ['memory', memory],
  ...(withRedis
    ? [['redis', (rate: number, b: number) => shared(raw!, `t${++made}`, rate, b)] as [string, (rate: number, burst: number) => Limiter]]
    : []),
];

// The script runs the table at the hardest clock only (epoch magnitude, not a whole
// second): its long streams cost a round trip per request, and its arithmetic is the same Lua
// doubles at every clock.
const RUNS = SUBJECTS.flatMap(([name, make]) => (name === 'memory' ? BASES : BASES.slice(-1)).map((t0) => [name, t0, make] as const));

describe.each(RUNS)('GCRA 60/s, burst 120, %s limiter, clock at %d ms', (_name, t0, make) => {
  it('a burst of 120 at one instant passes; the 121st is refused with Retry-After 1 s', async () => {
    const l = make(60, 120);
    const ds = await burst(l, 'k', t0, 120);
    expect(ds.every((d) => d.allowed)).toBe(true);
    expect(ds.map((d) => d.remaining)).toEqual(Array.from({ length: 120 }, (_, i) => 119 - i));
    expect(ds.every((d) => d.limit === 120 && d.retryAfterSeconds === 0)).toBe(true);
    expect(ds[0]!.resetSeconds).toBe(1); // one interval to refill
    expect(ds[119]!.resetSeconds).toBe(2); // 120 intervals = 2 s to refill

    const refused = await l.decide('k', t0, true);
    expect(refused).toEqual({ allowed: false, limit: 120, remaining: 0, resetSeconds: 2, retryAfterSeconds: 1 });
    expect(Number.isInteger(refused.retryAfterSeconds)).toBe(true);
    // Refusals take nothing: still refused at the same instant, still one interval to wait.
    expect(await l.decide('k', t0, true)).toEqual(refused);
  });

  it('after a full burst, one more passes one interval later, and 60 more one second later', async () => {
    const l = make(60, 120);
    await burst(l, 'k', t0, 120);
    expect((await l.decide('k', t0 + 10, true)).allowed).toBe(false); // 10 ms < 16.7 ms
    const oneSecond = await burst(l, 'k', t0 + 1000, 61);
    expect(oneSecond.filter((d) => d.allowed)).toHaveLength(60);
    expect(oneSecond[60]!.allowed).toBe(false);
    const two = make(60, 120);
    await burst(two, 'k', t0, 120);
    expect(await two.decide('k', t0 + 17, true)).toMatchObject({ allowed: true, remaining: 0 });
    expect((await two.decide('k', t0 + 17, true)).allowed).toBe(false);
  });

  it('after a full burst the bucket is full again 2 s later', async () => {
    const l = make(60, 120);
    await burst(l, 'k', t0, 120);
    expect(await l.decide('k', t0 + 2000, false)).toMatchObject({ allowed: true, remaining: 120, resetSeconds: 0 });
    expect((await burst(l, 'k', t0 + 2000, 121)).filter((d) => d.allowed)).toHaveLength(120);
  });

  it('59/s for a minute: all 3540 pass, with 119 left each time', async () => {
    const l = make(60, 120);
    const ds = await stream(l, 'k', t0, 59, 59 * 60);
    expect(ds.filter((d) => !d.allowed)).toHaveLength(0);
    expect(new Set(ds.map((d) => d.remaining))).toEqual(new Set([119]));
  });

  it('exactly 60/s without a burst passes forever with 119 left', async () => {
    const l = make(60, 120);
    const ds = await stream(l, 'k', t0, 60, 60 * 300);
    expect(ds.filter((d) => !d.allowed)).toHaveLength(0);
    expect(new Set(ds.map((d) => d.remaining))).toEqual(new Set([119]));
  });

  it('a sustained 61/s is limited from the 7261st request (119 s in), then 60 of every 61 pass', async () => {
    const l = make(60, 120);
    const ds = await stream(l, 'k', t0, 61, 61 * 200);
    const first = ds.findIndex((d) => !d.allowed);
    expect(first + 1).toBe(7261);
    expect(Math.floor((first * 1000) / 61 / 1000)).toBe(119); // seconds into the stream
    expect(ds[first]!.retryAfterSeconds).toBe(1);
    // The backlog after n requests is (n + 60) / 61 intervals, so after one minute (n = 3660)
    // 120 - 60.98 leaves 59.
    expect(ds[61 * 60 - 1]!.remaining).toBe(59);
    // Once limited: in each following full second exactly 60 of the 61 requests pass.
    for (let sec = 120; sec < 200; sec++) {
      const window = ds.slice(sec * 61, sec * 61 + 61);
      expect(
        window.filter((d) => d.allowed),
        `second ${sec}`,
      ).toHaveLength(60);
    }
  });

  it('60/s exactly, sustained after a full burst: every request passes with nothing to spare', async () => {
    const l = make(60, 120);
    await burst(l, 'k', t0, 120);
    const ds = await stream(l, 'k', t0 + 1000 / 60, 60, 60 * 300);
    expect(ds.filter((d) => !d.allowed)).toHaveLength(0);
    expect(new Set(ds.map((d) => d.remaining))).toEqual(new Set([0]));
    // ...and one request more at the same instant as the last is refused.
    expect((await l.decide('k', t0 + (60 * 300 * 1000) / 60, true)).allowed).toBe(false);
  });

  it('peek reports without consuming', async () => {
    const l = make(60, 120);
    expect(await l.decide('k', t0, false)).toEqual({ allowed: true, limit: 120, remaining: 120, resetSeconds: 0, retryAfterSeconds: 0 });
    for (let i = 0; i < 500; i++) await l.decide('k', t0, false);
    expect((await burst(l, 'k', t0, 121)).filter((d) => d.allowed)).toHaveLength(120);
    expect(await l.decide('k', t0, false)).toMatchObject({ allowed: false, remaining: 0, retryAfterSeconds: 1 });
    // peek counts what could be taken now (1); consume counts what is left after taking (0).
    expect(await l.decide('k', t0 + 17, false)).toMatchObject({ allowed: true, remaining: 1 });
    expect(await l.decide('k', t0 + 17, true)).toMatchObject({ allowed: true, remaining: 0 }); // the peek left it there to take
  });

  it('keys are independent', async () => {
    const l = make(60, 120);
    await burst(l, 'a', t0, 120);
    expect((await l.decide('a', t0, true)).allowed).toBe(false);
    expect(await l.decide('b', t0, true)).toMatchObject({ allowed: true, remaining: 119 });
    expect((await burst(l, 'c', t0, 121)).filter((d) => d.allowed)).toHaveLength(120);
  });

  it('rate and burst are configurable', async () => {
    const l = make(10, 20);
    const ds = await burst(l, 'k', t0, 21);
    expect(ds.filter((d) => d.allowed)).toHaveLength(20);
    expect(ds[19]).toMatchObject({ remaining: 0, resetSeconds: 2 });
    expect(ds[20]).toEqual({ allowed: false, limit: 20, remaining: 0, resetSeconds: 2, retryAfterSeconds: 1 });
    expect((await burst(l, 'k', t0 + 1000, 11)).filter((d) => d.allowed)).toHaveLength(10);

    const strict = make(1, 1);
    expect((await strict.decide('k', t0, true)).allowed).toBe(true);
    expect(await strict.decide('k', t0 + 999, true)).toMatchObject({ allowed: false, retryAfterSeconds: 1 });
    expect((await strict.decide('k', t0 + 1000, true)).allowed).toBe(true);
  });

  it("slow rates (the dashboard's one a minute): a burst passes exactly, whatever the instant", async () => {
    // One tick is 60 000 ms, so `now` in ticks has a long fraction at most instants: a TAT stored
    // with fewer digits than a double holds would round, and some bursts would lose their last.
    for (let k = 0; k < 20; k++) {
      const l = make(1 / 60, 5);
      const at = t0 + k * 7919;
      expect(
        (await burst(l, 'k', at, 6)).map((d) => d.allowed),
        `at ${at}`,
      ).toEqual([true, true, true, true, true, false]);
      expect((await l.decide('k', at + 59_999, true)).allowed).toBe(false);
      expect((await l.decide('k', at + 60_000, true)).allowed).toBe(true);
    }
  });

  it('Retry-After rounds the wait up to whole seconds', async () => {
    // one request per 2.5 s
    const l = make(0.4, 1);
    expect((await l.decide('k', t0, true)).allowed).toBe(true);
    expect(await l.decide('k', t0, true)).toMatchObject({ allowed: false, retryAfterSeconds: 3, resetSeconds: 3 });
    expect(await l.decide('k', t0 + 1500, true)).toMatchObject({ allowed: false, retryAfterSeconds: 1 });
    expect(await l.decide('k', t0 + 2499, true)).toMatchObject({ allowed: false, retryAfterSeconds: 1 });
    expect((await l.decide('k', t0 + 2500, true)).allowed).toBe(true);
  });

  it('a key idle long enough is fresh again (and survives the periodic sweep)', async () => {
    const l = make(60, 120);
    await burst(l, 'k', t0, 120);
    await burst(l, 'other', t0 + 60_000, 5); // triggers the sweep, which drops 'k'
    expect((await burst(l, 'k', t0 + 60_000, 121)).filter((d) => d.allowed)).toHaveLength(120);
  });
});

describe.skipIf(!withRedis)("the shared limiter on Redis' clock", () => {
  it("ignores the instances' clocks: one bucket whatever time each caller believes it is", async () => {
    const clocked = new RateLimiters(link!);
    // One request per 1000 s, bursts of 5: nothing refills while the test runs.
    const l = clocked.make('skewed', 0.001, 5);
    const skewed = [0, Date.UTC(2001, 0, 1), Date.now(), Date.now() + 3_600_000, 9e12];
    const ds = await Promise.all([...skewed, 1].map((t) => l.consume('k', t)));
    expect(ds.map((d) => d.allowed)).toEqual([true, true, true, true, true, false]);
    expect(ds.map((d) => d.remaining)).toEqual([4, 3, 2, 1, 0, 0]);
    expect(ds[5]!.retryAfterSeconds).toBeGreaterThan(990);
    expect(ds[5]!.retryAfterSeconds).toBeLessThanOrEqual(1000);
    expect((await l.peek('k', 0)).allowed).toBe(false);
    expect(clocked.health()).toEqual({ redis: 'up', fallbacks: 0 });
  });

  it('one key per bucket, expiring when the bucket is full again', async () => {
    const clocked = new RateLimiters(link!);
    const l = clocked.make('expiry', 0.001, 5);
    await l.consume('client-1');
    const raw = createClient({ url: redis!.url });
    await raw.connect();
    try {
      // One request is 1000 s of TAT ahead of now: the key lives that long, and no longer.
      const ttl = await raw.pTTL('clinic-api:rl:expiry:client-1');
      expect(ttl).toBeGreaterThan(990_000);
      expect(ttl).toBeLessThanOrEqual(1_000_000);
      await l.consume('client-1');
      expect(await raw.pTTL('clinic-api:rl:expiry:client-1')).toBeGreaterThan(1_990_000);
      // A peek writes nothing; a refused request neither.
      await l.peek('client-2');
      expect(await raw.exists('clinic-api:rl:expiry:client-2')).toBe(0);
      expect(await raw.keys('clinic-api:rl:expiry:*')).toEqual(['clinic-api:rl:expiry:client-1']);
    } finally {
      raw.destroy();
    }
  });
});

describe('async interface', () => {
  it('consume and peek give the same decisions as decide', async () => {
    const l = new MemoryGcraLimiter(60, 120);
    const t0 = Date.UTC(2026, 2, 28, 12);
    expect(await l.peek('k', t0)).toMatchObject({ allowed: true, remaining: 120 });
    for (let i = 0; i < 119; i++) await l.consume('k', t0);
    expect(await l.consume('k', t0)).toMatchObject({ allowed: true, remaining: 0, resetSeconds: 2 });
    expect(await l.consume('k', t0)).toMatchObject({ allowed: false, retryAfterSeconds: 1 });
    expect(await l.peek('k', t0)).toMatchObject({ allowed: false, retryAfterSeconds: 1 });
  });

  it('defaults to the wall clock', async () => {
    const l = new MemoryGcraLimiter(60, 120);
    expect(await l.consume('k')).toMatchObject({ allowed: true, remaining: 119 });
    expect(await l.peek('k')).toMatchObject({ allowed: true });
  });
});

describe('rate-limit headers (draft-ietf-httpapi-ratelimit-headers)', () => {
  it('RateLimit-Policy names the quota (the burst) and its window in seconds', () => {
    expect(policyHeader('key', new MemoryGcraLimiter(60, 120))).toBe('"key";q=120;w=2');
    expect(policyHeader('key', new MemoryGcraLimiter(10, 20))).toBe('"key";q=20;w=2');
    expect(policyHeader('ip', new MemoryGcraLimiter(10, 5))).toBe('"ip";q=5;w=1');
  });

  it('RateLimit carries what is left and when the bucket is full again', () => {
    const l = new MemoryGcraLimiter(60, 120);
    const t0 = Date.UTC(2026, 2, 28, 12);
    expect(stateHeader('key', l.decide('k', t0, true))).toBe('"key";r=119;t=1');
    const last = Array.from({ length: 119 }, () => l.decide('k', t0, true)).at(-1)!;
    expect(stateHeader('key', last)).toBe('"key";r=0;t=2');
    expect(stateHeader('key', l.decide('k', t0, true))).toBe('"key";r=0;t=2');
  });
});
