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
import { cpuMeter, reapedChildrenMs, waitForQuiet, type ChildServer } from './processes.js';
import { serviceEnv } from './servers.js';
import type { ServiceBuild } from './service.js';

export const BACKUP_ID = 'backup';
export const BACKUP_RATE = 100;
const P99_GOAL_MS = 50;
const QUIET_CORES = 0.15;
export const PATH = '/api/v1/citas?limit=100';

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
  /** the median rounds */
  baseline: RateStats;
  during: RateStats;
  /** every round, in the order run */
  baselines: RateStats[];
  rounds: (RateStats & { seconds: number })[];
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

interface Round {
  during: RateStats;
  bytes: number;
  counts: Record<string, number>;
  /** the command's own figure: copy, checks and rename */
  seconds: number;
  /** the process, start to exit */
  wallSeconds: number;
  cpuSeconds: number;
}

/** One backup into `file` (removed afterwards unless `keep`) while the service answers the rate. */
async function backupRound(a: {
  opts: Options;
  build: ServiceBuild;
  dataDir: string;
  service: ChildServer;
  url: string;
  headers: Record<string, string>;
  file: string;
  log: (line: string) => void;
}): Promise<Round> {
  const { opts, service, url, headers, file, log } = a;
  if (opts.quietWait > 0) await waitForQuiet([service.pid], QUIET_CORES, opts.quietWait * 1000);
  const agent = new http.Agent({ keepAlive: true, maxSockets: 512 });
  if (opts.warmup > 0) await openLoop(url, headers, BACKUP_RATE, opts.warmup, { agent, status: 200 });
  let running = true;
  const meter = cpuMeter(service.pid, [service.pid]);
  const children0 = reapedChildrenMs();
  const backup = runCli(a.build, ['backup', file, '--json', '--force'], serviceEnv(a.dataDir, 0, null), () => (running = false));
  const load = await openLoop(url, headers, BACKUP_RATE, 0, { agent, status: 200, until: () => !running });
  const done = await backup;
  const measured = meter.stop();
  agent.destroy();
  // A service that died meanwhile would show only as requests without an answer: say why.
  if (await Promise.race([service.exited.then(() => true), new Promise<false>((r) => setImmediate(() => r(false)))]))
    throw new Error(`the service exited during the backup round; its last output:\n${service.output()}`);
  // The backup process is ours, not another program's load: its CPU time (counted in this
  // process once it has exited) comes off the other load.
  const cpuMs = reapedChildrenMs() - children0;
  const cpu = { ...measured, otherCores: Math.max(0, measured.otherCores - cpuMs / measured.elapsedMs) };
  if (done.code !== 0) throw new Error(`clinic-api backup exited ${done.code}:\n${done.stderr.slice(-2000)}`);
  const out = JSON.parse(done.stdout) as { bytes: number; seconds: number; counts: Record<string, number> };
  const during = stats(load, cpu);
  log(
    `  ${(out.bytes / 1e6).toFixed(0)} MB in ${out.seconds.toFixed(1)} s (process: ${done.seconds.toFixed(1)} s); ` +
      `requests meanwhile: ${during.requests}, p50 ${during.p50.toFixed(1)} ms, p99 ${during.p99.toFixed(1)} ms, ` +
      `max ${during.max.toFixed(1)} ms, ${during.bad} non-2xx/errors${statusesOf(load)}, backup CPU ${(cpuMs / 1000).toFixed(1)} s, ` +
      `other load ${cpu.otherCores.toFixed(2)} cores`,
  );
  return { during, bytes: out.bytes, counts: out.counts, seconds: out.seconds, wallSeconds: done.seconds, cpuSeconds: cpuMs / 1000 };
}

/** The round with the median p99 (the typical one, not the luckiest), as the other cases report. */
function medianRound<T>(rounds: T[], p99: (r: T) => number): T {
  return [...rounds].sort((x, y) => p99(x) - p99(y))[Math.floor((rounds.length - 1) / 2)]!;
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
  const file = path.join(work, 'clinic.db');
  try {
    // Rounds without and with a backup in turn (--repeat of each), so that both see the same
    // machine; a busy minute then shows in both.
    const baselines: RateStats[] = [];
    const rounds: Round[] = [];
    for (let i = 0; i < opts.repeat; i++) {
      log(`backup: round ${i + 1}/${opts.repeat}: the citas page at ${BACKUP_RATE} req/s for ${opts.duration} s without a backup ...`);
      const base = await measure(
        service,
        [service.pid],
        () => [],
        opts,
        fixedRate(url, headers, { ...opts, rate: BACKUP_RATE, status: 200 }),
      );
      baselines.push(stats(base.result, base.cpu));
      log(
        `  p50 ${baselines[i]!.p50.toFixed(1)} ms, p99 ${baselines[i]!.p99.toFixed(1)} ms, ` +
          `${baselines[i]!.bad} non-2xx/errors${statusesOf(base.result)}, other load ${base.cpu.otherCores.toFixed(2)} cores`,
      );
      log(
        `backup: round ${i + 1}/${opts.repeat}: ` +
          `clinic-api backup of ${path.join(dataDir, 'clinic.db')} while the service answers ${BACKUP_RATE} req/s ...`,
      );
      rounds.push(await backupRound({ opts, build, dataDir, service, url, headers, file, log }));
    }
    const round = medianRound(rounds, (r) => r.during.p99);
    const baseline = medianRound(baselines, (b) => b.p99);

    log('backup: clinic-api restore of that backup into a new DATA_DIR ...');
    const restored = await runCli(build, ['restore', file, '--json'], serviceEnv(path.join(work, 'restored'), 0, null));
    if (restored.code !== 0) throw new Error(`clinic-api restore exited ${restored.code}:\n${restored.stderr.slice(-2000)}`);
    log(`  ${restored.seconds.toFixed(1)} s`);

    const { counts } = round;
    const records = (counts.clientas ?? 0) + (counts.citas ?? 0) + (counts.llamadas ?? 0);
    const mark = (ok: boolean) => (ok ? 'met' : '**not met**');
    const during = round.during;
    const noisy = rounds.some((r) => r.during.otherCores > 0.2 || r.during.stolenCores > 0.2);
    return {
      dataset: ds,
      counts,
      records,
      bytes: round.bytes,
      backupSeconds: round.seconds,
      backupWallSeconds: round.wallSeconds,
      backupCpuSeconds: round.cpuSeconds,
      restoreWallSeconds: restored.seconds,
      baseline,
      during,
      baselines,
      rounds: rounds.map((r) => ({ ...r.during, seconds: r.seconds })),
      server: build.describe,
      verdicts: [
        `p99 during the backup${opts.repeat > 1 ? ` (the round with the median p99 of ${opts.repeat})` : ''} ${during.p99.toFixed(1)} ms ` +
          `(without: ${baseline.p99.toFixed(1)} ms): ${mark(during.p99 < P99_GOAL_MS)} (goal: under ${P99_GOAL_MS} ms).`,
        `Requests that failed during the backups: ${rounds.reduce((n, r) => n + r.during.bad, 0)} of ` +
          `${rounds.reduce((n, r) => n + r.during.requests, 0)}: ${mark(rounds.every((r) => r.during.bad === 0))} (goal: none).`,
        ...(noisy
          ? [
              'Other programs or the host took more than 0.2 cores during a backup round (see the rounds): ' +
                'its latencies say as much about them.',
            ]
          : []),
      ],
    };
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
}
