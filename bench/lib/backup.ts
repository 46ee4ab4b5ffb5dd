// The backup case (`--cases backup`, SQLite only): `clinic-api backup` of the data set's database,
// run as the operator runs it (its own process, the build under test), while the service answers
// the citas page at a fixed rate of 100 requests/s (issue 22's figure); the same rate without a
// backup just before, for contrast; then a restore of that backup into a new DATA_DIR, timed.
// Goals: p99 under 50 ms during the backup, and no request failing.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import type { Dataset } from './dataset.js';
import { fixedRate, measure } from './measure.js';
import { openLoop, percentile, type OpenLoopResult } from './open-loop.js';
import type { Options } from './options.js';
import { cpuMeter, reapedChildrenCpuMs, waitForQuiet, type ChildServer } from './processes.js';
import { machineTable, table, type Machine } from './report.js';
import { serviceEnv } from './servers.js';
import type { ServiceBuild } from './service.js';

export const BACKUP_ID = 'backup';
export const BACKUP_RATE = 100;
const P99_GOAL_MS = 50;
const QUIET_CORES = 0.15;
const PATH = '/api/v1/citas?limit=100';

export const backupStart = '<!-- bench:backup:sqlite:start -->';
export const backupEnd = '<!-- bench:backup:sqlite:end -->';

export interface RateStats {
  offered: number;
  achieved: number;
  requests: number;
  p50: number;
  p99: number;
  max: number;
  /** answers other than 200, and errors (refused, reset, timed out) */
  bad: number;
  otherCores: number;
  stolenCores: number;
}

export interface BackupReport {
  dataset: Dataset;
  /** rows per table, as the backup reported them */
  counts: Record<string, number>;
  /** clientas, citas and llamadas of every clinic */
  records: number;
  bytes: number;
  /** the command's own figure: copy, checks and rename */
  backupSeconds: number;
  /** the process, start to exit */
  backupWallSeconds: number;
  /** CPU time of the backup process */
  backupCpuSeconds: number;
  restoreWallSeconds: number;
  baseline: RateStats;
  during: RateStats;
  server: string;
  verdicts: string[];
}

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
  seconds: number;
}

function runCli(build: ServiceBuild, args: string[], env: NodeJS.ProcessEnv, onExit?: () => void): Promise<Run> {
  const t0 = performance.now();
  const child = spawn(process.execPath, [build.bin, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  return new Promise((resolve) =>
    child.once('close', (code) => {
      onExit?.();
      resolve({ code, stdout, stderr, seconds: (performance.now() - t0) / 1000 });
    }),
  );
}

/** " (200: 990, 503: 10, no answer: 2)" when anything but 200 came back, else "". */
function statusesOf(r: OpenLoopResult): string {
  if (r.unexpected + r.errors === 0) return '';
  const parts = [...r.statuses].sort(([a], [b]) => a - b).map(([status, n]) => `${status}: ${n}`);
  return ` (${[...parts, ...(r.errors > 0 ? [`no answer: ${r.errors}`] : [])].join(', ')})`;
}

function stats(r: OpenLoopResult, cpu: { otherCores: number; stolenCores: number }): RateStats {
  return {
    offered: r.offered,
    achieved: r.achieved,
    requests: r.sent,
    p50: percentile(r.latencies, 50),
    p99: percentile(r.latencies, 99),
    max: percentile(r.latencies, 100),
    bad: r.unexpected + r.errors,
    otherCores: cpu.otherCores,
    stolenCores: cpu.stolenCores,
  };
}

export async function runBackupCase(a: {
  opts: Options;
  build: ServiceBuild;
  dataDir: string;
  ds: Dataset;
  service: ChildServer;
  log: (line: string) => void;
}): Promise<BackupReport> {
  const { opts, build, dataDir, ds, service, log } = a;
  const url = service.baseUrl + PATH;
  const headers = { authorization: `Bearer ${ds.apiKey}`, 'accept-encoding': 'identity' };
  // Beside DATA_DIR (the same file system, as an operator's backup directory often is), never in it.
  const work = fs.mkdtempSync(path.join(path.dirname(dataDir), 'backup-case-'));
  try {
    log(`backup: the citas page at ${BACKUP_RATE} req/s for ${opts.duration} s without a backup ...`);
    const base = await measure(
      service,
      [service.pid],
      () => [],
      opts,
      fixedRate(url, headers, { ...opts, rate: BACKUP_RATE, status: 200 }),
    );
    const baseline = stats(base.result, base.cpu);
    log(`  p50 ${baseline.p50.toFixed(1)} ms, p99 ${baseline.p99.toFixed(1)} ms, ${baseline.bad} non-2xx/errors${statusesOf(base.result)}`);

    const file = path.join(work, 'clinic.db');
    log(`backup: clinic-api backup of ${path.join(dataDir, 'clinic.db')} while the service answers ${BACKUP_RATE} req/s ...`);
    if (opts.quietWait > 0) await waitForQuiet([service.pid], QUIET_CORES, opts.quietWait * 1000);
    const agent = new http.Agent({ keepAlive: true, maxSockets: 512 });
    if (opts.warmup > 0) await openLoop(url, headers, BACKUP_RATE, opts.warmup, { agent, status: 200 });
    let running = true;
    const meter = cpuMeter(service.pid, [service.pid]);
    const children0 = reapedChildrenCpuMs();
    const backup = runCli(build, ['backup', file, '--json'], serviceEnv(dataDir, 0, null), () => (running = false));
    const load = await openLoop(url, headers, BACKUP_RATE, 0, { agent, status: 200, until: () => !running });
    const done = await backup;
    const measured = meter.stop();
    agent.destroy();
    // The backup process is ours, not another program's load: its CPU time (counted in this
    // process once it has exited) comes off the other load.
    const backupCpuMs = reapedChildrenCpuMs() - children0;
    const cpu = { ...measured, otherCores: Math.max(0, measured.otherCores - backupCpuMs / measured.elapsedMs) };
    if (done.code !== 0) throw new Error(`clinic-api backup exited ${done.code}:\n${done.stderr.slice(-2000)}`);
    const out = JSON.parse(done.stdout) as { bytes: number; seconds: number; counts: Record<string, number> };
    const during = stats(load, cpu);
    log(
      `  ${(out.bytes / 1e6).toFixed(0)} MB in ${out.seconds.toFixed(1)} s (process: ${done.seconds.toFixed(1)} s); ` +
        `requests meanwhile: ${during.requests}, p50 ${during.p50.toFixed(1)} ms, p99 ${during.p99.toFixed(1)} ms, ` +
        `max ${during.max.toFixed(1)} ms, ${during.bad} non-2xx/errors${statusesOf(load)}, backup CPU ${(backupCpuMs / 1000).toFixed(1)} s, ` +
        `other load ${cpu.otherCores.toFixed(2)} cores`,
    );

    log('backup: clinic-api restore of that backup into a new DATA_DIR ...');
    const restored = await runCli(build, ['restore', file, '--json'], serviceEnv(path.join(work, 'restored'), 0, null));
    if (restored.code !== 0) throw new Error(`clinic-api restore exited ${restored.code}:\n${restored.stderr.slice(-2000)}`);
    log(`  ${restored.seconds.toFixed(1)} s`);

    const records = (out.counts.clientas ?? 0) + (out.counts.citas ?? 0) + (out.counts.llamadas ?? 0);
    const mark = (ok: boolean) => (ok ? 'met' : '**not met**');
    return {
      dataset: ds,
      counts: out.counts,
      records,
      bytes: out.bytes,
      backupSeconds: out.seconds,
      backupWallSeconds: done.seconds,
      backupCpuSeconds: backupCpuMs / 1000,
      restoreWallSeconds: restored.seconds,
      baseline,
      during,
      server: build.describe,
      verdicts: [
        `p99 during the backup ${during.p99.toFixed(1)} ms (without: ${baseline.p99.toFixed(1)} ms): ${mark(during.p99 < P99_GOAL_MS)} (goal: under ${P99_GOAL_MS} ms).`,
        `Requests that failed during the backup: ${during.bad} of ${during.requests}: ${mark(during.bad === 0)} (goal: none).`,
        ...(cpu.otherCores > 0.2 || cpu.stolenCores > 0.2
          ? [
              `Other programs used ${cpu.otherCores.toFixed(2)} cores and the host took ${cpu.stolenCores.toFixed(2)} meanwhile: the figures are less reliable.`,
            ]
          : []),
      ],
    };
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
}

const f1 = (n: number) => (Number.isFinite(n) ? n.toFixed(1) : '–');
const f2 = (n: number) => (Number.isFinite(n) ? n.toFixed(2) : '–');
const f0 = (n: number) => Math.round(n).toLocaleString('en-US');

export function backupTables(r: BackupReport): string {
  const what = table(
    ['records (clientas + citas + llamadas)', 'file', 'backup (command)', 'backup (process)', 'backup CPU', 'restore (process)'],
    [
      [
        f0(r.records),
        `${f0(r.bytes / 1e6)} MB`,
        `${f1(r.backupSeconds)} s`,
        `${f1(r.backupWallSeconds)} s`,
        `${f1(r.backupCpuSeconds)} s`,
        `${f1(r.restoreWallSeconds)} s`,
      ],
    ],
    ['r', 'r', 'r', 'r', 'r', 'r'],
  );
  const row = (label: string, s: RateStats) => [
    label,
    f1(s.offered),
    f1(s.achieved),
    String(s.requests),
    f1(s.p50),
    f1(s.p99),
    f1(s.max),
    String(s.bad),
    f2(s.otherCores),
    f2(s.stolenCores),
  ];
  const load = table(
    [
      `${PATH} at a fixed rate`,
      'offered req/s',
      'achieved req/s',
      'requests',
      'p50 ms',
      'p99 ms',
      'max ms',
      'non-2xx + errors',
      'other load (cores)',
      'stolen by the host (cores)',
    ],
    [row('no backup', r.baseline), row('while `clinic-api backup` runs', r.during)],
    ['l', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r'],
  );
  return `${what}\n\n${load}`;
}

export function backupSection(m: Machine, r: BackupReport): string {
  const c = r.dataset.clinics;
  return [
    backupStart,
    '## Backup while serving (`--cases backup`, SQLite)',
    '',
    machineTable(m),
    '',
    `Data set: ${c.length} clinics (${c.map((x) => `scale ${x.scale}`).join(', ')}), made by ${r.dataset.madeBy}; server: ${r.server}.`,
    `Rows in the backup: ${Object.entries(r.counts)
      .map(([t, n]) => `${f0(n)} ${t}`)
      .join(', ')}.`,
    '',
    backupTables(r),
    '',
    ...r.verdicts.map((v) => `- ${v}`),
    backupEnd,
  ].join('\n');
}
