// The rate-limit comparison (`limits`): what limits shared on Redis cost, and whether a fleet
// holds one limit.
//
//  1. Side by side, in one run: the service with its limits in memory and the service on the same
//     data with REDIS_URL, a process of its own for each round of each side, at the same fixed
//     rate (--rate, 300/s), for the citas page built for every request, the same page kept by
//     the page cache, and /me (the cheapest request, where the limiter is the largest share of
//     the work), the sides alternating round by round (--repeat).
//     Server CPU ms/request, p99, redis-server's CPU, and the script's calls per request (the
//     limits are raised as for every case, so the Redis side decides most requests on its local
//     view: services/shared-rate-limit.ts). A third side in every round, the floor
//     (bench/floor-server.ts): a plain node:http server sending the same bytes and doing nothing
//     else, so that each round shows what this machine gives any server at that rate; on a
//     virtual machine whose host takes its CPUs away now and then, that alone can exceed the
//     p99 goal.
//  2. Two instances with a real limit (LIMIT requests/s, bursts of LIMIT) under five times that
//     load, spread evenly over both, on one fresh key: the requests allowed against what one
//     limit allows in that time (burst + rate x seconds). With Redis, then, for contrast, with
//     each instance limiting in its own memory.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createClient } from 'redis';
import { gcraCalls, startRedisServer, type RedisServer } from '../../tools/redis-server.js';
import { median } from '../scale/common.js';
import { fixedRate, measure, type Measured } from './measure.js';
import { openLoop, percentile, type OpenLoopResult } from './open-loop.js';
import { ROOT, type Options } from './options.js';
import { cpuMeter, freePort, startServer, waitForQuiet, type ChildServer } from './processes.js';
import { serviceEnv } from './servers.js';
import type { ServiceBuild } from './service.js';

/** The service's default REDIS_TIMEOUT_MS (config.ts). */
const DEFAULT_REDIS_TIMEOUT_MS = 10;
/** The fleet's limit: requests/s and burst, per key. */
export const FLEET_LIMIT = 100;
/**
 * The fleet on Redis runs twice: with the default REDIS_TIMEOUT_MS, and with a longer one, as an
 * operator sets it on a crowded host (docs/deploy.md), where a Redis waiting for a CPU longer than
 * 10 ms counts as an outage and each instance decides in memory meanwhile.
 */
const FLEET_REDIS_TIMEOUTS = [DEFAULT_REDIS_TIMEOUT_MS, 100];
const FLEET_LOAD_FACTOR = 5;
const DOWN_LINE = 'Redis does not answer';

export type Backend = 'memory' | 'redis';
/** A side of the comparison: the service with either limiter, or the floor (no service at all). */
export type Side = Backend | 'floor';

export interface LimiterRow {
  id: string;
  label: string;
  path: string;
  backend: Side;
  offered: number;
  achieved: number;
  p50: number;
  p99: number;
  max: number;
  bad: number;
  cpuMsPerReq: number;
  /** redis-server's CPU time per request (redis backend only) */
  redisCpuMsPerReq: number | null;
  /** calls of the rate-limit script per request (redis backend only): below 1 when the local view decided */
  redisCallsPerReq: number | null;
  otherCores: number;
  /** the most steal time seen in a round (the host's other machines), in cores */
  stolenCores: number;
  /** p99 of each round, in the order run */
  roundP99s: number[];
}

export interface FleetRow {
  backend: Backend;
  /** REDIS_TIMEOUT_MS of the instances (redis backend only) */
  redisTimeoutMs: number | null;
  instances: number;
  offered: number;
  seconds: number;
  allowed: number;
  refused: number;
  /** responses other than 200 and 429, and failed requests */
  bad: number;
  /** burst + rate x seconds: what one limit allows */
  expected: number;
  /** outages the instances logged (Redis did not answer within REDIS_TIMEOUT_MS) */
  outages: number;
  otherCores: number;
}

export interface LimitsReport {
  rows: LimiterRow[];
  /** rounds per side of the side-by-side comparison (--repeat) */
  rounds: number;
  fleet: FleetRow[];
  redisTimeoutMs: string;
}

/** `env`: the case's own additions to the service's environment (lib/servers.ts serviceEnv). */
const CASES: { id: string; label: string; path: string; env: NodeJS.ProcessEnv }[] = [
  { id: 'citas', label: 'citas, default 30 days, page built (PAGE_CACHE_MB=0)', path: '/api/v1/citas?limit=100', env: {} },
  // The same page asked again while nothing changed, as a polling integration asks for it: sent
  // from the page cache (the service's default) after the first request of each process.
  {
    id: 'citas-kept',
    label: 'citas, default 30 days, page kept (PAGE_CACHE_MB=32, the default)',
    path: '/api/v1/citas?limit=100',
    env: { PAGE_CACHE_MB: '32' },
  },
  { id: 'me', label: 'GET /me (auth and limit only)', path: '/api/v1/me', env: {} },
];

interface LimitsRun {
  opts: Options;
  build: ServiceBuild;
  dataDir: string;
  databaseUrl: string | null;
  apiKey: string;
  /** the service of the other cases: limits in memory */
  memoryService: ChildServer;
  /** every process of the run (not counted as other programs' load) */
  pids: number[];
  dbPids: () => number[];
  log: (line: string) => void;
}

export async function runLimits(run: LimitsRun): Promise<LimitsReport> {
  const { opts, log } = run;
  log('rate limits: starting a throw-away redis-server on 127.0.0.1 ...');
  const redis = await startRedisServer();
  const started: ChildServer[] = [];
  const start = async (name: string, extra: NodeJS.ProcessEnv) => {
    const port = await freePort();
    const s = await startServer({
      name,
      port,
      readyPath: '/api/v1/openapi.json',
      cwd: process.cwd(),
      args: [...opts.nodeArgs, run.build.bin, 'serve'],
      env: { ...serviceEnv(run.dataDir, port, run.databaseUrl), ...extra },
    });
    started.push(s);
    return s;
  };
  try {
    const redisService = await start('service (REDIS_URL)', { REDIS_URL: redis.url }).catch((err: unknown) => {
      // e.g. --ref of a commit from before REDIS_URL was accepted
      throw new Error(
        'the service did not start with REDIS_URL (--no-limits skips the rate-limit comparison): ' +
          `${err instanceof Error ? err.message : String(err)}`,
      );
    });
    await expectBucketsInRedis(redis, redisService, run.apiKey);
    await redisService.stop();
    const pids = [...run.pids, redis.pid()];
    // Each round measures a service process of its own (see compareSides).
    const rows: LimiterRow[] = [];
    for (const c of CASES) {
      const fresh = (backend: Backend, round: number) =>
        start(`service (${backend === 'redis' ? 'REDIS_URL' : 'limits in memory'}, round ${round})`, {
          ...c.env,
          ...(backend === 'redis' ? { REDIS_URL: redis.url } : {}),
        });
      rows.push(...(await compare(run, pids, c, fresh, redis)));
    }

    const fleet: FleetRow[] = [];
    const fleetRuns = [
      ...FLEET_REDIS_TIMEOUTS.map((t) => ({ backend: 'redis' as const, timeout: t as number | null })),
      { backend: 'memory' as const, timeout: null },
    ];
    for (const { backend, timeout } of fleetRuns) {
      const limit = String(FLEET_LIMIT);
      const extra = {
        RATE_LIMIT_RPS: limit,
        RATE_LIMIT_BURST: limit,
        ...(backend === 'redis' ? { REDIS_URL: redis.url } : {}),
        ...(timeout !== null ? { REDIS_TIMEOUT_MS: String(timeout) } : {}),
      };
      const pair = [await start(`fleet ${backend} 1`, extra), await start(`fleet ${backend} 2`, extra)];
      fleet.push(await fleetCase(run, [...run.pids, ...pair.map((s) => s.pid), redis.pid()], backend, timeout, pair, redis));
      await Promise.all(pair.map((s) => s.stop()));
    }
    return { rows, rounds: opts.repeat, fleet, redisTimeoutMs: process.env.REDIS_TIMEOUT_MS ?? '10 (the default)' };
  } finally {
    await Promise.all(started.map((s) => s.stop()));
    await redis.close();
  }
}

/**
 * The service with REDIS_URL decides in Redis: a request runs the GCRA script there (counted in
 * Redis' own command statistics; the bucket itself expires at once at the raised limits).
 */
/** The rate-limit script's calls so far, from Redis' own command statistics. */
async function scriptCalls(redis: RedisServer): Promise<number> {
  const raw = createClient({ url: redis.url });
  await raw.connect();
  try {
    return gcraCalls(await raw.info('commandstats'));
  } finally {
    raw.destroy();
  }
}

async function expectBucketsInRedis(redis: RedisServer, server: ChildServer, apiKey: string): Promise<void> {
  const before = await scriptCalls(redis);
  const res = await fetch(`${server.baseUrl}/api/v1/me`, { headers: { authorization: `Bearer ${apiKey}` } });
  if (res.status !== 200) throw new Error(`the service with REDIS_URL answered ${res.status} to /api/v1/me`);
  if ((await scriptCalls(redis)) <= before) throw new Error('the service with REDIS_URL did not run its limit in Redis');
}

/**
 * The floor of a case: bench/floor-server.ts serving the bytes the service answers to the case's
 * request (fetched once, uncompressed, as the load asks for them). Stopped by the caller.
 */
async function startFloor(run: LimitsRun, c: (typeof CASES)[number]): Promise<ChildServer> {
  const res = await fetch(run.memoryService.baseUrl + c.path, {
    headers: { authorization: `Bearer ${run.apiKey}`, 'accept-encoding': 'identity' },
    signal: AbortSignal.timeout(10_000),
  });
  const body = Buffer.from(await res.arrayBuffer());
  if (res.status !== 200) throw new Error(`the floor of ${c.id}: GET ${c.path} answered ${res.status}: ${body.toString('utf8', 0, 300)}`);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'clinic-api-floor-'));
  const file = path.join(dir, 'body');
  fs.writeFileSync(file, body);
  const port = await freePort();
  try {
    return await startServer({
      name: `floor (${c.id})`,
      port,
      readyPath: '/',
      cwd: ROOT,
      args: ['--import', 'tsx', path.join(ROOT, 'bench/floor-server.ts')],
      env: { ...process.env, FLOOR_BODY: file, FLOOR_TYPE: res.headers.get('content-type') ?? 'application/json', PORT: String(port) },
    });
  } finally {
    // The server has read it at start (or failed to start).
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** One side's measurement of one round. */
interface Round {
  m: Measured<OpenLoopResult>;
  /** redis-server's CPU ms during it */
  redisMs: number;
  /** the rate-limit script's calls per request sent, warm-up included (the link's probe runs only while Redis is down) */
  callsPerReq: number;
}

/** A new service process for one round of one side. */
type FreshService = (backend: Backend, round: number) => Promise<ChildServer>;

/**
 * The sides of one case, alternating round by round (--repeat rounds; the floor first, then
 * memory and Redis, which of the two goes first in turn: run after run of the same order had
 * Redis always last, and a side's place in the round could pass for its cost), so that a change
 * in the machine's load falls on all rather than on one side's
 * block. Each round of a service side runs on a process started for it (warmed up as every
 * measurement is): the CPU per request of one long-lived process differs from another's of the
 * same program by up to a quarter on this machine, which a single process per side would carry
 * into every round. Each row is the round with the median p99 for the latency figures, and the
 * median of the rounds' CPU per request (the comparison's own figure) for the CPU.
 */
async function compare(
  run: LimitsRun,
  pids: number[],
  c: (typeof CASES)[number],
  fresh: FreshService,
  redis: RedisServer,
): Promise<LimiterRow[]> {
  const headers = { authorization: `Bearer ${run.apiKey}` };
  const floor = await startFloor(run, c);
  try {
    return await compareSides(run, [...pids, floor.pid], c, floor, fresh, headers, redis);
  } finally {
    await floor.stop();
  }
}

const SIDE_NAMES: Record<Side, string> = {
  floor: 'the floor (plain node:http, same bytes)',
  memory: 'limits in memory',
  redis: 'limits on Redis',
};

const SIDES: Side[] = ['floor', 'memory', 'redis'];
/** Every other round: Redis before memory. */
const SIDES_TURNED: Side[] = ['floor', 'redis', 'memory'];

async function compareSides(
  run: LimitsRun,
  pids: number[],
  c: (typeof CASES)[number],
  floor: ChildServer,
  fresh: FreshService,
  headers: Record<string, string>,
  redis: RedisServer,
): Promise<LimiterRow[]> {
  const { opts, log } = run;
  const rounds: Record<Side, Round[]> = { floor: [], memory: [], redis: [] };
  for (let i = 0; i < opts.repeat; i++) {
    for (const backend of i % 2 === 0 ? SIDES : SIDES_TURNED) {
      const server = backend === 'floor' ? floor : await fresh(backend, i + 1);
      try {
        log(
          `rate limits: ${c.id} at ${opts.rate} req/s, ${SIDE_NAMES[backend]}, ` +
            `${opts.duration} s${opts.repeat > 1 ? ` (round ${i + 1} of ${opts.repeat})` : ''} ...`,
        );
        const calls0 = await scriptCalls(redis);
        const redisMeter = cpuMeter(redis.pid(), []);
        const m = await measure(
          server,
          [...pids, server.pid],
          run.dbPids,
          opts,
          fixedRate(server.baseUrl + c.path, headers, { ...opts, status: 200 }),
        );
        const round = {
          m,
          redisMs: redisMeter.stop().serverMs,
          callsPerReq: ((await scriptCalls(redis)) - calls0) / (opts.rate * (opts.warmup + opts.duration)),
        };
        rounds[backend].push(round);
        logRow(log, rowOf(c, backend, [round]));
      } finally {
        if (server !== floor) await server.stop();
      }
    }
  }
  return SIDES.map((backend) => rowOf(c, backend, rounds[backend]));
}

function rowOf(c: (typeof CASES)[number], backend: Side, rounds: Round[]): LimiterRow {
  const perReq = (ms: number, m: Measured<OpenLoopResult>) => ms / Math.max(1, m.result.completed);
  const typical = [...rounds].sort((a, b) => percentile(a.m.result.latencies, 99) - percentile(b.m.result.latencies, 99))[
    Math.floor((rounds.length - 1) / 2)
  ]!;
  const r = typical.m.result;
  return {
    id: c.id,
    label: c.label,
    path: c.path,
    backend,
    offered: r.offered,
    achieved: r.achieved,
    p50: percentile(r.latencies, 50),
    p99: percentile(r.latencies, 99),
    max: percentile(r.latencies, 100),
    bad: r.unexpected + r.errors,
    cpuMsPerReq: median(rounds.map((x) => perReq(x.m.cpu.serverMs, x.m))),
    redisCpuMsPerReq: backend === 'redis' ? median(rounds.map((x) => perReq(x.redisMs, x.m))) : null,
    redisCallsPerReq: backend === 'redis' ? median(rounds.map((x) => x.callsPerReq)) : null,
    otherCores: Math.max(...rounds.map((x) => x.m.cpu.otherCores)),
    stolenCores: Math.max(...rounds.map((x) => x.m.cpu.stolenCores)),
    roundP99s: rounds.map((x) => percentile(x.m.result.latencies, 99)),
  };
}

function logRow(log: (line: string) => void, row: LimiterRow): void {
  log(
    `  p50 ${row.p50.toFixed(1)} ms, p99 ${row.p99.toFixed(1)} ms, server CPU ${row.cpuMsPerReq.toFixed(3)} ms/req` +
      `${row.redisCpuMsPerReq !== null ? `, redis-server ${row.redisCpuMsPerReq.toFixed(3)} ms/req` : ''}, ${row.bad} non-2xx/errors, ` +
      `other load ${row.otherCores.toFixed(2)} cores, stolen by the host ${row.stolenCores.toFixed(2)} cores`,
  );
}

async function fleetCase(
  run: LimitsRun,
  pids: number[],
  backend: Backend,
  timeout: number | null,
  pair: ChildServer[],
  redis: RedisServer,
): Promise<FleetRow> {
  const { opts, log } = run;
  const offered = FLEET_LOAD_FACTOR * FLEET_LIMIT;
  log(
    `rate limits: two instances, limits ${backend === 'redis' ? `on Redis (REDIS_TIMEOUT_MS ${timeout})` : 'in memory'}, ` +
      `${offered} req/s offered on one key (${FLEET_LOAD_FACTOR}x its limit of ${FLEET_LIMIT}/s, ` +
      `burst ${FLEET_LIMIT}), ${opts.duration} s ...`,
  );
  if (opts.quietWait > 0) await waitForQuiet(pids, 0.15, opts.quietWait * 1000);
  // A fresh bucket: nothing of earlier runs in Redis (the in-memory instances are new processes).
  const raw = createClient({ url: redis.url });
  await raw.connect();
  await raw.flushAll();
  raw.destroy();
  const headers = { authorization: `Bearer ${run.apiKey}` };
  const meter = cpuMeter(-1, pids, run.dbPids());
  const results: OpenLoopResult[] = await Promise.all(
    pair.map((s) => openLoop(`${s.baseUrl}/api/v1/me`, headers, offered / pair.length, opts.duration)),
  );
  const { otherCores } = meter.stop();
  const allowed = results.reduce((n, r) => n + r.ok, 0);
  const refused = results.reduce((n, r) => n + (r.statuses.get(429) ?? 0), 0);
  const bad = results.reduce((n, r) => n + r.completed - r.ok - (r.statuses.get(429) ?? 0) + r.errors, 0);
  const row: FleetRow = {
    backend,
    redisTimeoutMs: timeout,
    instances: pair.length,
    offered,
    seconds: opts.duration,
    allowed,
    refused,
    bad,
    expected: FLEET_LIMIT + FLEET_LIMIT * opts.duration,
    outages: pair.reduce((n, s) => n + s.output().split(DOWN_LINE).length - 1, 0),
    otherCores,
  };
  log(
    `  allowed ${allowed} of ${allowed + refused} (expected ${row.expected}: ${(allowed / row.expected).toFixed(2)}x), ${bad} other ` +
      `answers/errors, ${row.outages} Redis outages logged`,
  );
  return row;
}
