// `npm run bench`: the service against its targets (docs/benchmarks.md), in one run on SQLite,
// beside a bare Fastify + better-sqlite3 route that runs the same appointment query and
// Platformatic DB's generated API on the same data. Not part of `npm test`.
//
//   npm run bench                                        # every case, scale 100 (100k citas), 10 s each
//   npm run bench -- --cases bare,citas --repeat 3       # one target, median of 3 rounds
//   npm run bench -- --cases citas,platformatic          # against Platformatic DB (installed on first use)
//   npm run bench -- --cases citas --node /opt/node22/bin/node   # the memory target on Node 22
//   npm run bench -- --data-dir .bench-data              # keep the data set and reuse it next time
//
// The steps: the options (lib/options.ts), the build under test (lib/service.ts), the data set
// (lib/dataset.ts), the servers (lib/servers.ts), each case checked once (lib/cases.ts), rounds
// of the closed-loop cases and the open-loop case, and the figures against the targets
// (lib/report.ts).
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Result } from 'autocannon';
import { verify, withQueries, type Case, type Range, type Target } from './lib/cases.js';
import { prepareDataset, type Dataset } from './lib/dataset.js';
import { bad, closedLoop, fixedRate, measure, median, type Measured } from './lib/measure.js';
import { percentile } from './lib/open-loop.js';
import { log, parseOptions, ROOT, type Options } from './lib/options.js';
import { makeMemoryBudget, type MemoryBudget } from './lib/memory-budget.js';
import { installHooks, readMemory, runServersIn, type ChildServer } from './lib/processes.js';
import { machine, report, type LoadRow, type RateRow } from './lib/report.js';
import { serviceEnv, startServers } from './lib/servers.js';
import { buildService, loadServiceModules, type ServiceModules } from './lib/service.js';

const MiB = 2 ** 20;
/** The page cache's size when PAGE_CACHE_MB is unset (src/config/variables.ts). */
const DEFAULT_PAGE_CACHE_MB = 32;

/**
 * The servers' memory budget (lib/memory-budget.ts), and how the report says it. Without one
 * where one was asked for, the run goes on and says so: the other figures do not depend on it.
 */
function memoryBudget(bytes: number | null): { made: MemoryBudget | null; said: string } {
  if (bytes === null) return { made: null, said: "the machine's memory (--memory-budget none)" };
  const size = bytes % 2 ** 30 === 0 ? `${bytes / 2 ** 30} GiB` : `${bytes / 2 ** 20} MiB`;
  const b = makeMemoryBudget(bytes);
  if ('unavailable' in b) {
    log(`no memory budget (${b.unavailable}): the servers run in the machine's memory, and the memory figures are not the target's`);
    return { made: null, said: `the machine's memory: a ${size} budget could not be made (${b.unavailable})` };
  }
  runServersIn(b);
  return { made: b, said: `a ${size} memory budget (a memory cgroup, as a container's limit)` };
}

async function main(): Promise<void> {
  const opts = parseOptions();
  if (process.platform !== 'linux') log('not Linux: RSS figures (from /proc) will be missing');
  installHooks();
  const budget = memoryBudget(opts.memoryBudget);
  const tmpRoot = opts.dataDir ? null : fs.mkdtempSync(path.join(os.tmpdir(), 'clinic-api-bench-'));
  // Also on Ctrl-C: installHooks() turns SIGINT/SIGTERM into an exit that kills the servers.
  if (tmpRoot) process.on('exit', () => fs.rmSync(tmpRoot, { recursive: true, force: true }));
  let servers: Map<Target, ChildServer> | null = null;
  try {
    const build = buildService(ROOT, { ref: opts.ref, prebuilt: opts.prebuilt }, log);
    const mods = await loadServiceModules(build);
    const dataDir = opts.dataDir ?? path.join(tmpRoot!, 'data');
    const ds = await prepareDataset({
      dataDir,
      scale: opts.scale,
      smallScale: opts.smallScale,
      smallClinics: opts.smallClinics,
      log,
      mods,
      madeBy: build.describe,
      env: serviceEnv(dataDir, 0),
    });
    const targets = new Set(opts.cases.map((c) => c.target));
    const range = defaultCitasRange(ds, mods);
    servers = await startServers(opts, ROOT, ds, build, range, targets, log);
    const serverOf = (c: Case) => servers!.get(c.target)!;
    const cases = withQueries(opts.cases, ds, range);

    log('checking that every case answers 200 with the expected page ...');
    const totals = new Map<string, unknown>();
    for (const c of cases) totals.set(c.id, await verify(c, serverOf(c), ds, log));
    for (const other of ['bare', 'platformatic'])
      if (totals.has(other) && totals.has('citas') && totals.get(other) !== totals.get('citas'))
        throw new Error(
          `case ${other} counts ${String(totals.get(other))} citas but the service ${String(totals.get('citas'))}: not the same query`,
        );

    const pids = [...servers.values()].map((s) => s.pid);
    const cold = servers.get('cold');
    const openLoopOn = cold && opts.cases.some((c) => c.id === 'citas') ? cold : null;
    const { load, rate } = await rounds(opts, cases, ds, serverOf, pids, openLoopOn);
    const hwm = (t: Target) => {
      const s = servers!.get(t);
      return s ? (readMemory(s.pid)?.hwm ?? NaN) / MiB : null;
    };
    const settings =
      `Data: ${ds.big.citas.toLocaleString('en-US')} citas, ${ds.big.clientas.toLocaleString('en-US')} clientas in the clinic under load ` +
      `(scale ${ds.big.scale}), ${ds.clinics.length - 1} small clinics beside it. Load: ${opts.connections} connections, ` +
      `${opts.duration} s per case after ${opts.warmup} s of warm-up${opts.repeat > 1 ? `, median of ${opts.repeat} rounds` : ''}; ` +
      `open loop at ${opts.rate} req/s. Server: ${build.describe}. Servers ran in ${budget.said}.`;
    process.stdout.write(
      `\n${report(
        machine(),
        {
          load,
          rate,
          coldHwmMiB: hwm('cold'),
          keptHwmMiB: hwm('kept'),
          pageCacheMiB: DEFAULT_PAGE_CACHE_MB,
          serviceNode: nodeVersion(opts.node),
        },
        settings,
      )}\n`,
    );
  } finally {
    await Promise.all([...(servers?.values() ?? [])].map((s) => s.stop()));
    budget.made?.remove();
    if (tmpRoot) fs.rmSync(tmpRoot, { recursive: true, force: true });
  }
}

/** The range GET /api/v1/citas reads by default, for the bare route and Platformatic's query: today .. today + 30, whole local days. */
function defaultCitasRange(ds: Dataset, mods: ServiceModules): Range {
  const tz = ds.big.timezone;
  const today = mods.todayIn(tz, Date.now());
  return { start: mods.dayStart(today, tz), end: mods.dayStart(mods.addDays(today, 31), tz) };
}

function nodeVersion(node: string | null): string {
  return node ? execFileSync(node, ['--version'], { encoding: 'utf8' }).trim() : process.version;
}

/**
 * The closed-loop cases (`connections` clients, each sending its next request when answered),
 * then the open-loop case on `openLoopOn` (the cold service), in rounds. With --repeat N, N
 * rounds that run every case once in turn, and each case's median round: the cases compared side
 * by side then see the same machine, where N runs of one case and then N of the next would put a
 * shared machine's drift between them. The open loop's p99 is the median round's too: on this
 * kind of shared 2-core machine one 10 s window in two or three has a p99 of 13-21 ms, with the
 * request log off as well, while the others give 3-6 ms (docs/benchmarks.md); every round's
 * figure is reported.
 */
async function rounds(
  opts: Options,
  cases: Case[],
  ds: Dataset,
  serverOf: (c: Case) => ChildServer,
  pids: number[],
  openLoopOn: ChildServer | null,
): Promise<{ load: LoadRow[]; rate: RateRow | null }> {
  const runs = new Map<string, Measured<Result>[]>(cases.map((c) => [c.id, []]));
  const rates: RoundRate[] = [];
  const ofRound = (round: number) => (opts.repeat > 1 ? `, round ${round} of ${opts.repeat}` : '');
  for (let round = 1; round <= opts.repeat; round++) {
    for (const c of cases) {
      log(`load: ${c.id} (${opts.warmup} s warm-up + ${opts.duration} s${ofRound(round)}) ...`);
      const server = serverOf(c);
      const req = { method: c.method ?? 'GET', body: c.body, headers: { authorization: `Bearer ${ds.apiKey}`, ...c.headers } };
      runs.get(c.id)!.push(await measure(server, pids, opts, closedLoop(server.baseUrl + c.path, req, opts)));
    }
    if (openLoopOn) {
      log(`open loop: the cold page at ${opts.rate} req/s (${opts.warmup} s warm-up + ${opts.duration} s${ofRound(round)}) ...`);
      rates.push(await openLoopCase(opts, ds, openLoopOn, pids));
    }
  }
  // Failed answers of any round count: the median round alone could hide them.
  const rate =
    rates.length === 0
      ? null
      : { ...median(rates, (r) => r.p99), p99Rounds: rates.map((r) => r.p99), bad: rates.reduce((n, r) => n + r.bad, 0) };
  return { load: closedRows(cases, runs), rate };
}

/** Each closed-loop case's median round, as a row of the report. */
function closedRows(cases: Case[], runs: Map<string, Measured<Result>[]>): LoadRow[] {
  return cases.map((c) => {
    const m = median(runs.get(c.id)!, (x) => x.result.requests.average);
    const r = m.result;
    const row: LoadRow = {
      id: c.id,
      label: c.label,
      reqPerSec: r.requests.average,
      p50: r.latency.p50,
      p99: r.latency.p99,
      bad: bad(r),
      cpuMsPerReq: m.cpu.serverMs / Math.max(1, r.requests.total),
      peakRssMiB: m.peakRssMiB,
      otherCores: m.cpu.otherCores,
    };
    log(`  ${c.id}: ${row.reqPerSec.toFixed(0)} req/s, p99 ${row.p99} ms, ${row.bad} non-200, peak RSS ${row.peakRssMiB.toFixed(0)} MiB`);
    return row;
  });
}

/** One round of the open-loop case: the report's row less what only the rounds together give. */
type RoundRate = Omit<RateRow, 'p99Rounds'>;

/** The cold page at a fixed offered rate (open loop: lib/open-loop.ts). */
async function openLoopCase(opts: Options, ds: Dataset, cold: ChildServer, pids: number[]): Promise<RoundRate> {
  const url = `${cold.baseUrl}/api/v1/citas?limit=100`;
  const m = await measure(cold, pids, opts, fixedRate(url, { authorization: `Bearer ${ds.apiKey}` }, { ...opts, status: 200 }));
  const r = m.result;
  return {
    offered: r.offered,
    achieved: r.achieved,
    p50: percentile(r.latencies, 50),
    p99: percentile(r.latencies, 99),
    bad: r.unexpected + r.errors,
    otherCores: m.cpu.otherCores,
  };
}

main().catch((err: unknown) => {
  process.stderr.write(`bench: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exitCode = 1;
});
