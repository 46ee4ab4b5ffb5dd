// One scale of a benchmark run, in named steps: its database and data set, the servers, the
// first requests (checked, and timed before any cache holds their answers), the closed-loop and
// fixed-rate cases, then the verdicts against the targets.
import fs from 'node:fs';
import path from 'node:path';
import type { PgServer } from '../../tools/postgres-server.js';
import { createDatabase } from '../../tools/postgres-database.js';
import { runBackupCase } from './backup.js';
import { CASES, RATE_CASES, verify, type Case, type Target } from './cases.js';
import { prepareDataset, type Dataset } from './dataset.js';
import { runLimits } from './limits.js';
import { runMcp } from './mcp.js';
import { runSdkPaging } from './sdk-paging.js';
import type { Result } from 'autocannon';
import { bad, closedLoop, fixedRate, measure, median, medianOf, type Measured } from './measure.js';
import { percentile } from './open-loop.js';
import { log, ROOT, type Options } from './options.js';
import { postgresPids, readMemory, type ChildServer } from './processes.js';
import type { LoadRow, RateRow, ScaleReport } from './report.js';
import { serviceEnv, startServers, type Servers } from './servers.js';
import type { ServiceBuild, ServiceModules } from './service.js';
import { verdicts } from './verdicts.js';

const MiB = 2 ** 20;
/** Statement timeout while the data set is generated (one transaction per clinic, up to 1M rows). */
const BUILD_STATEMENT_TIMEOUT_MS = 600_000;
/** Where the service under load reads and measures: the servers, their pids and the database's. */
interface UnderLoad {
  opts: Options;
  /** the cases of this run, with their data-set-dependent requests prepared */
  cases: Case[];
  ds: Dataset;
  serverOf: (t: Target) => ChildServer;
  pids: number[];
  dbPids: () => number[];
  pg: boolean;
}

/** `withLimits`: run the rate-limit comparison (lib/limits.ts) after the cases, at this scale. */
export async function runScale(
  opts: Options,
  scale: number,
  tmpRoot: string | null,
  build: ServiceBuild,
  mods: ServiceModules,
  pg: PgServer | null,
  withLimits: boolean,
): Promise<ScaleReport> {
  const dataDir = path.join(opts.dataDir ?? tmpRoot!, `${opts.db}-scale-${scale}`);
  let servers: Servers | null = null;
  try {
    const databaseUrl = await scaleDatabase(pg, scale);
    const ds = await prepareDataset({
      db: opts.db,
      dataDir,
      scale,
      smallScale: opts.smallScale,
      smallClinics: opts.smallClinics,
      log,
      mods,
      madeBy: build.describe,
      // The configuration is validated whole: a socket timeout shorter than the statement
      // timeout is refused (config.ts), although the generation serves no HTTP.
      env: {
        ...serviceEnv(dataDir, 0, databaseUrl),
        DB_STATEMENT_TIMEOUT_MS: String(BUILD_STATEMENT_TIMEOUT_MS),
        SOCKET_TIMEOUT_MS: String(BUILD_STATEMENT_TIMEOUT_MS + 60_000),
      },
    });
    servers = await startServers(opts, ROOT, scale, dataDir, databaseUrl, ds, build, defaultCitasRange(ds, mods), log);
    const { bare, service, serviceNoLog } = servers;
    const idleRss = service ? (readMemory(service.pid)?.rss ?? NaN) / MiB : NaN;
    // PostgreSQL's processes are part of the system under test, not other programs' load.
    const pgPort = pg ? Number(new URL(pg.url).port) : 0;
    const serverOf = (t: Target) => (t === 'bare' ? bare : t === 'service-nolog' ? serviceNoLog : service)!;
    const cases = await Promise.all(
      opts.cases.map(async (c) => {
        if (!c.prepare) return c;
        const prepared = await c.prepare(serverOf(c.target), ds);
        return { ...c, path: prepared.path, headers: { ...c.headers, ...prepared.headers } };
      }),
    );
    const run: UnderLoad = {
      opts,
      cases,
      ds,
      serverOf,
      pids: servers.all.map((x) => x.pid),
      dbPids: () => (pg ? postgresPids(pgPort) : []),
      pg: pg !== null,
    };

    const firstMs = await firstRequests(run);
    const loadRows: LoadRow[] = [];
    loadRows.push(
      ...(await loadCases(
        run,
        cases.filter((c) => !c.runLast),
        firstMs,
      )),
    );
    const rateRows: RateRow[] = [];
    for (const id of RATE_CASES) {
      const c = cases.find((x) => x.id === id);
      if (c) rateRows.push(await rateCase(run, c));
    }
    // Compression last: see Case.runLast.
    const hwmBeforeCompression = service ? (readMemory(service.pid)?.hwm ?? NaN) / MiB : NaN;
    loadRows.push(
      ...(await loadCases(
        run,
        cases.filter((c) => c.runLast),
        firstMs,
      )),
    );
    loadRows.sort((a, b) => CASES.findIndex((c) => c.id === a.id) - CASES.findIndex((c) => c.id === b.id));

    const serviceHwm = service ? (readMemory(service.pid)?.hwm ?? NaN) / MiB : NaN;
    // After the cases' memory figures: its memory rounds start processes of their own.
    const mcp = opts.mcp
      ? await runMcp({ opts, build, dataDir, databaseUrl, apiKey: ds.apiKey, pids: run.pids, dbPids: run.dbPids, log }, service!)
      : null;
    // After the cases and their memory figures: a client of the service like any other.
    const sdkPaging = opts.sdkPaging ? await runSdkPaging(service!, ds, log) : null;
    // After the cases and their memory figures: it starts processes of its own.
    const limits = withLimits
      ? await runLimits({
          opts,
          build,
          dataDir,
          databaseUrl,
          apiKey: ds.apiKey,
          memoryService: service!,
          pids: run.pids,
          dbPids: run.dbPids,
          log,
        })
      : null;
    // Last: it writes a copy of the whole data set, which the page cache of the OS then holds.
    const backup = opts.backup ? await runBackupCase({ opts, build, dataDir, ds, service: service!, log }) : null;
    const compressedLast = cases.some((c) => c.runLast);
    return {
      db: opts.db,
      dataset: ds,
      settings: {
        connections: opts.connections,
        duration: opts.duration,
        warmup: opts.warmup,
        repeat: opts.repeat,
        server: build.describe,
        rateLimit: 'RATE_LIMIT_RPS=100000, RATE_LIMIT_BURST=1000000',
      },
      load: loadRows,
      rate: rateRows,
      serviceHwmMiB: serviceHwm,
      serviceHwmBeforeCompressionMiB: compressedLast ? hwmBeforeCompression : null,
      serviceIdleRssMiB: idleRss,
      bareHwmMiB: bare ? (readMemory(bare.pid)?.hwm ?? NaN) / MiB : null,
      verdicts: verdicts({
        load: loadRows,
        rate: rateRows,
        serviceHwmMiB: service ? serviceHwm : null,
        hwmBeforeCompressionMiB: compressedLast ? hwmBeforeCompression : null,
        bareSkipped: opts.db === 'postgres' && opts.skippedBare,
      }),
      mcp,
      limits,
      sdkPaging,
      backup,
    };
  } finally {
    // SIGTERM: the service closes cleanly (and writes its CPU profile when --cpu-prof is on).
    await Promise.all((servers?.all ?? []).map((s) => s.stop()));
    // A temporary data set goes as soon as its scale is done (a 1M-appointment one is ~1 GB).
    if (tmpRoot) fs.rmSync(dataDir, { recursive: true, force: true });
    if (opts.cpuProf && servers && servers.all.length > 0)
      log(
        `CPU profile(s) in ${opts.cpuProf}; summarise with: node --import tsx bench/profile-summary.ts ${opts.cpuProf}/<file>.cpuprofile`,
      );
  }
}

/** PostgreSQL: a database of its own for this scale; SQLite: null (the file in DATA_DIR). */
async function scaleDatabase(pg: PgServer | null, scale: number): Promise<string | null> {
  if (!pg) return null;
  const url = await createDatabase(pg.url, `bench_scale_${String(scale).replace('.', '_')}`);
  log(`PostgreSQL database for scale ${scale}: ${new URL(url).pathname.slice(1)}`);
  return url;
}

/** The range GET /api/v1/citas reads by default, for the bare route: today .. today + 30, whole local days. */
function defaultCitasRange(ds: Dataset, mods: ServiceModules): { start: number; end: number } {
  const tz = ds.big.timezone;
  const today = mods.todayIn(tz, Date.now());
  return { start: mods.dayStart(today, tz), end: mods.dayStart(mods.addDays(today, 31), tz) };
}

/**
 * One request per case, checked (a benchmark of error responses would be worthless). They are the
 * first requests the server sees: their time is what a request costs before any cache holds its
 * answer ("first request ms").
 */
async function firstRequests(run: UnderLoad): Promise<Map<string, number>> {
  log('checking that every case answers 200 with the expected body ...');
  const totals = new Map<string, unknown>();
  const firstMs = new Map<string, number>();
  for (const c of run.cases) {
    const t0 = performance.now();
    totals.set(c.id, (await verify(c, run.serverOf(c.target), run.ds, log)).total);
    firstMs.set(c.id, performance.now() - t0);
  }
  if (totals.has('bare') && totals.has('citas') && totals.get('bare') !== totals.get('citas')) {
    throw new Error(
      `the bare route counts ${String(totals.get('bare'))} citas but the service ${String(totals.get('citas'))}: ` +
        'they do not run the same query',
    );
  }
  return firstMs;
}

/**
 * The closed-loop cases: `connections` clients each, each client sending its next request when
 * answered. With --repeat N, N rounds that run every case once in turn, and each case's median
 * run: the comparisons side by side (the service against the bare route, the log on against
 * off) then see the same machine, where N runs of one case and then N of the next put any drift
 * of a shared machine between them.
 */
async function loadCases(run: UnderLoad, cases: readonly Case[], firstMs: Map<string, number>): Promise<LoadRow[]> {
  const { opts } = run;
  const runs = new Map<string, Measured<Result>[]>(cases.map((c) => [c.id, []]));
  for (let round = 1; round <= opts.repeat; round++) {
    for (const c of cases) {
      log(
        `load: ${c.id} (${opts.warmup} s warm-up + ${opts.duration} s, ` +
          `${opts.connections} connections${opts.repeat > 1 ? `, round ${round} of ${opts.repeat}` : ''}) ...`,
      );
      const server = run.serverOf(c.target);
      const headers = { authorization: `Bearer ${run.ds.apiKey}`, ...c.headers };
      runs.get(c.id)!.push(await measure(server, run.pids, run.dbPids, opts, closedLoop(server.baseUrl + c.path, headers, opts)));
    }
  }
  return cases.map((c) =>
    loadRow(
      run,
      c,
      median(runs.get(c.id)!, (x) => x.result.requests.average),
      firstMs.get(c.id),
    ),
  );
}

function loadRow(run: UnderLoad, c: Case, m: Measured<Result>, firstMs: number | undefined): LoadRow {
  const r = m.result;
  const row: LoadRow = {
    id: c.id,
    label: c.label,
    path: (c.shown ?? c.path) + (c.headers?.['accept-encoding'] ? ' (Accept-Encoding: br)' : ''),
    reqPerSec: r.requests.average,
    p50: r.latency.p50,
    p99: r.latency.p99,
    p999: r.latency.p99_9,
    max: r.latency.max,
    bad: bad(r, c.status ?? 200),
    kbPerResponse: r.throughput.total / Math.max(1, r.requests.total) / 1024,
    peakRssMiB: m.peakRssMiB,
    cpuMsPerReq: m.cpu.serverMs / Math.max(1, r.requests.total),
    otherCores: m.cpu.otherCores,
    ...(run.pg ? { dbCpuMsPerReq: m.cpu.dbMs / Math.max(1, r.requests.total) } : {}),
    firstMs,
  };
  log(
    `  ${c.id}${run.opts.repeat > 1 ? ` (median of ${run.opts.repeat})` : ''}: ${row.reqPerSec.toFixed(0)} req/s, p50 ${row.p50} ms, ` +
      `p99 ${row.p99} ms, ${row.bad} non-2xx/errors, server CPU ${row.cpuMsPerReq.toFixed(2)} ms/req` +
      `${row.dbCpuMsPerReq !== undefined ? `, PostgreSQL CPU ${row.dbCpuMsPerReq.toFixed(2)} ms/req` : ''}, ` +
      `peak RSS ${row.peakRssMiB.toFixed(0)} MiB, other load ${row.otherCores.toFixed(2)} cores`,
  );
  return row;
}

/** An open-loop case: the same requests at a fixed offered rate. */
async function rateCase(run: UnderLoad, c: Case): Promise<RateRow> {
  const { opts } = run;
  log(`fixed rate: ${c.id} at ${opts.rate} req/s for ${opts.duration} s${opts.repeat > 1 ? `, median of ${opts.repeat}` : ''} ...`);
  const server = run.serverOf(c.target);
  const headers = { authorization: `Bearer ${run.ds.apiKey}`, ...c.headers };
  const m = await medianOf(
    opts.repeat,
    (x) => percentile(x.result.latencies, 99),
    () => measure(server, run.pids, run.dbPids, opts, fixedRate(server.baseUrl + c.path, headers, { ...opts, status: c.status ?? 200 })),
  );
  const r = m.result;
  const row: RateRow = {
    id: c.id,
    label: c.label,
    path: c.path,
    offered: r.offered,
    achieved: r.achieved,
    p50: percentile(r.latencies, 50),
    p99: percentile(r.latencies, 99),
    max: percentile(r.latencies, 100),
    bad: r.unexpected + r.errors,
    peakRssMiB: m.peakRssMiB,
    cpuMsPerReq: m.cpu.serverMs / Math.max(1, r.completed),
    serverCores: m.cpu.serverMs / m.cpu.elapsedMs,
    otherCores: m.cpu.otherCores,
    ...(run.pg ? { dbCpuMsPerReq: m.cpu.dbMs / Math.max(1, r.completed) } : {}),
  };
  log(
    `  ${row.achieved.toFixed(0)} req/s achieved, p50 ${row.p50.toFixed(1)} ms, p99 ${row.p99.toFixed(1)} ms, ${row.bad} non-2xx/errors, ` +
      `server busy ${(row.serverCores * 100).toFixed(0)}% of a core, other load ${row.otherCores.toFixed(2)} cores`,
  );
  return row;
}
