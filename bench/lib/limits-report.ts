// Markdown for the rate-limit comparison (lib/limits.ts): its own section of docs/benchmarks.md,
// per database, so that `--cases limits` alone does not replace the other cases' figures (and
// the other way round), with the verdicts against the issue's goals.
import { FLEET_LIMIT, type LimiterRow, type LimitsReport, type Side } from './limits.js';
import { machineTable, table, type Db, type Machine } from './report.js';

export const limitsStart = (db: Db) => `<!-- bench:limits:${db}:start -->`;
export const limitsEnd = (db: Db) => `<!-- bench:limits:${db}:end -->`;

/** Goals (issue 14): the Redis limiter's server CPU per request within +15 %, p99 < 25 ms. */
const CPU_GOAL = 1.15;
const P99_GOAL_MS = 25;
/** The fleet holds one limit within 10 % (the contract). */
const FLEET_TOLERANCE = 0.1;
const NOISY_CORES = 0.2;

const f1 = (n: number) => (Number.isFinite(n) ? n.toFixed(1) : '–');
const f2 = (n: number) => (Number.isFinite(n) ? n.toFixed(2) : '–');
const f3 = (n: number) => (Number.isFinite(n) ? n.toFixed(3) : '–');
const mark = (ok: boolean) => (ok ? 'met' : '**not met**');
const SIDE_LABELS: Record<Side, string> = { floor: 'none: the floor (plain node:http, same bytes)', memory: 'in memory', redis: 'Redis' };

export function limitsTables(r: LimitsReport): string {
  const side = table(
    [
      'case',
      'limits',
      'offered req/s',
      'achieved req/s',
      'p50 ms',
      'p99 ms',
      'max ms',
      'non-2xx + errors',
      'server CPU ms/req',
      'redis-server CPU ms/req',
      'Redis calls per request',
      'other load (cores)',
      'stolen by the host (cores)',
    ],
    r.rows.map((x) => [
      x.label,
      SIDE_LABELS[x.backend],
      f1(x.offered),
      f1(x.achieved),
      f1(x.p50),
      f1(x.p99),
      f1(x.max),
      String(x.bad),
      f3(x.cpuMsPerReq),
      x.redisCpuMsPerReq === null ? '–' : f3(x.redisCpuMsPerReq),
      x.redisCallsPerReq === null ? '–' : f3(x.redisCallsPerReq),
      f2(x.otherCores),
      f2(x.stolenCores),
    ]),
    ['l', 'l', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r'],
  );
  const fleet = table(
    [
      'limits',
      'REDIS_TIMEOUT_MS',
      'instances',
      'offered req/s (total)',
      'seconds',
      'allowed (200)',
      'refused (429)',
      'other answers + errors',
      'one limit allows',
      'allowed / allowed by one limit',
      'Redis outages logged',
      'other load (cores)',
    ],
    r.fleet.map((x) => [
      x.backend === 'redis' ? 'Redis' : 'each in its memory',
      x.redisTimeoutMs === null ? '–' : String(x.redisTimeoutMs),
      String(x.instances),
      String(x.offered),
      String(x.seconds),
      String(x.allowed),
      String(x.refused),
      String(x.bad),
      String(x.expected),
      `${f2(x.allowed / x.expected)}×`,
      String(x.outages),
      f2(x.otherCores),
    ]),
    ['l', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r'],
  );
  return [
    `Side by side, the same data and key, at a fixed rate (open loop; REDIS_TIMEOUT_MS ${r.redisTimeoutMs}), the sides alternating ` +
      `round by round (${r.rounds} round${r.rounds === 1 ? '' : 's'}; the floor first, then memory and Redis, each first in turn: ` +
      'p50/p99/max of the round with the median p99, the median CPU per request of the rounds, the most other load and host steal ' +
      'seen). The limits are raised as for every case, so every request is allowed and far from its limit: on the Redis side most are ' +
      'decided on the instance\'s local view of the bucket, and Redis is told every 250 ms ("Redis calls per request"); a key near its ' +
      'limit asks Redis on every request (the fleet case below). The floor, in the same rounds, is a plain node:http server sending ' +
      'the same bytes and doing nothing else (bench/floor-server.ts): what this machine gives a server that does no work, ' +
      'at that rate and response size:',
    '',
    side,
    '',
    `Two instances, one key limited to ${FLEET_LIMIT} requests/s with bursts of ${FLEET_LIMIT}, under five times that load spread ` +
      'evenly over both (`GET /api/v1/me`); "one limit allows" is the burst + the rate × the seconds:',
    '',
    fleet,
  ].join('\n');
}

export function limitsVerdicts(r: LimitsReport): string[] {
  const out: string[] = [];
  for (const id of [...new Set(r.rows.map((x) => x.id))]) {
    const mem = r.rows.find((x) => x.id === id && x.backend === 'memory');
    const red = r.rows.find((x) => x.id === id && x.backend === 'redis');
    const floor = r.rows.find((x) => x.id === id && x.backend === 'floor');
    if (!mem || !red) continue;
    const ratio = red.cpuMsPerReq / mem.cpuMsPerReq;
    const withRedis = red.redisCpuMsPerReq === null ? NaN : (red.cpuMsPerReq + red.redisCpuMsPerReq) / mem.cpuMsPerReq;
    out.push(
      `${red.label}: server CPU with Redis ${f3(red.cpuMsPerReq)} vs ${f3(mem.cpuMsPerReq)} ms/req in memory ` +
        `(${ratio >= 1 ? '+' : ''}${((ratio - 1) * 100).toFixed(0)}%; ${f2(withRedis)}× counting redis-server's CPU too): ` +
        `${mark(ratio <= CPU_GOAL)} (goal: under +${((CPU_GOAL - 1) * 100).toFixed(0)}%); p99 with Redis ${f1(red.p99)} ms: ` +
        `${mark(red.p99 < P99_GOAL_MS && red.bad === 0)} (goal: < ` +
        `${P99_GOAL_MS} ms)${missedToo(red, mem)}${floor ? p99Context(mem.roundP99s, red.roundP99s, floor.roundP99s) : ''}.`,
    );
  }
  for (const shared of r.fleet.filter((x) => x.backend === 'redis')) {
    const ratio = shared.allowed / shared.expected;
    out.push(
      `Two instances on Redis (REDIS_TIMEOUT_MS ${shared.redisTimeoutMs}) allowed ${f2(ratio)}× what one limit ` +
        `allows: ${mark(Math.abs(ratio - 1) <= FLEET_TOLERANCE && shared.bad === 0)} (goal: within ${FLEET_TOLERANCE * 100}%)` +
        `${shared.outages > 0 ? `; **${shared.outages} Redis outage(s) logged** meanwhile (decided in memory while they lasted)` : ''}.`,
    );
  }
  const apart = r.fleet.find((x) => x.backend === 'memory');
  if (apart) out.push(`For contrast, each instance limiting in its own memory allowed ${f2(apart.allowed / apart.expected)}×.`);
  const noisy = [...r.rows, ...r.fleet].filter((x) => x.otherCores >= NOISY_CORES);
  if (noisy.length)
    out.push(
      `**Other programs were busy** during ${noisy.length} of these measurements (up to ` +
        `${f2(Math.max(...noisy.map((x) => x.otherCores)))} cores): the figures are noisier than on a quiet machine.`,
    );
  return out;
}

/**
 * When Redis' side misses the p99 goal, whether the same service with its limits in memory
 * missed it too (the median rounds of both): then the tail is there without the shared limiter.
 */
function missedToo(red: LimiterRow, mem: LimiterRow): string {
  if (red.p99 < P99_GOAL_MS) return '';
  return mem.p99 < P99_GOAL_MS
    ? `; with its limits in memory the service met it (${f1(mem.p99)} ms)`
    : `; with its limits in memory the service missed it too (${f1(mem.p99)} ms): the tail is there without Redis`;
}

/**
 * Each round's p99 on every side, and how many rounds the floor itself missed the goal: a round
 * where a server doing nothing missed it says the machine, not the service, set that round's tail.
 */
function p99Context(mem: number[], red: number[], floor: number[]): string {
  const rounds = floor.map((f, i) => `${f1(f)} / ${f1(mem[i] ?? NaN)} / ${f1(red[i] ?? NaN)}`).join('; ');
  const missed = floor.filter((f) => !(f < P99_GOAL_MS)).length;
  const quiet = floor.map((f, i) => (f < P99_GOAL_MS ? red[i] : undefined)).filter((x): x is number => x !== undefined);
  return (
    `; p99 by round, floor / in memory / Redis, ms: ${rounds}` +
    (missed > 0
      ? `; the floor, a server doing nothing, missed the goal itself in ${missed} of ${floor.length} round${floor.length === 1 ? '' : 's'}`
      : '') +
    (missed > 0 && quiet.length > 0 ? `; in the rounds where it met it, Redis had ${quiet.map(f1).join(', ')} ms` : '')
  );
}

export function limitsSection(m: Machine, db: Db, r: LimitsReport): string {
  return [
    limitsStart(db),
    '',
    `## Rate limits on Redis: ${db === 'sqlite' ? 'SQLite' : 'PostgreSQL'}`,
    '',
    `Written by \`npm run bench -- --db ${db}\` (or \`--cases limits\`); the rest of this file is not touched.`,
    '',
    machineTable(m),
    '',
    limitsTables(r),
    '',
    ...limitsVerdicts(r).map((v) => `- ${v}`),
    '',
    limitsEnd(db),
  ].join('\n');
}
