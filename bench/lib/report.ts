// Markdown for the terminal and for docs/benchmarks.md: the machine, the data set, the figures.
import fs from 'node:fs';
import os from 'node:os';
import type { Dataset } from './dataset.js';
import type { BackupReport } from './backup.js';
import type { LimitsReport } from './limits.js';
import type { McpReport } from './mcp.js';
import type { SdkPagingReport } from './sdk-paging.js';

export type Db = 'sqlite' | 'postgres';

/** One results section per database, so a sqlite run and a postgres run do not replace each other. */
export const resultsStart = (db: Db) => `<!-- bench:results:${db}:start -->`;
export const resultsEnd = (db: Db) => `<!-- bench:results:${db}:end -->`;
/** The single section of earlier versions (SQLite only); a sqlite run takes its place. */
const LEGACY_START = '<!-- bench:results:start -->';
const LEGACY_END = '<!-- bench:results:end -->';
const DB_NAME: Record<Db, string> = { sqlite: 'SQLite', postgres: 'PostgreSQL' };
/** The growth series' goal: p50 at the largest scale within this factor of p50 at the smallest. */
export const GROWTH_GOAL = 1.5;

export interface Machine {
  cpu: string;
  cores: number;
  memoryGiB: number;
  os: string;
  node: string;
  date: string;
}

export function machine(): Machine {
  const cpus = os.cpus();
  return {
    cpu: cpus[0]?.model.trim() ?? 'unknown',
    cores: cpus.length,
    memoryGiB: Math.round((os.totalmem() / 2 ** 30) * 10) / 10,
    os: `${os.type()} ${os.release()} ${os.arch()}`,
    node: process.version,
    date: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
  };
}

export interface LoadRow {
  id: string;
  label: string;
  path: string;
  reqPerSec: number;
  p50: number;
  p99: number;
  p999: number;
  max: number;
  bad: number;
  kbPerResponse: number;
  peakRssMiB: number;
  /** the server's CPU time per request, in ms */
  cpuMsPerReq: number;
  /** PostgreSQL's CPU time per request, in ms (--db postgres only) */
  dbCpuMsPerReq?: number;
  /** cores used by other programs during the measurement */
  otherCores: number;
  /**
   * The first request of this case after the server started, alone on an idle server: what a
   * request costs before any cache holds its answer (e.g. a search's total).
   */
  firstMs?: number;
}

export interface RateRow {
  id: string;
  label: string;
  path: string;
  offered: number;
  achieved: number;
  p50: number;
  p99: number;
  max: number;
  bad: number;
  peakRssMiB: number;
  cpuMsPerReq: number;
  dbCpuMsPerReq?: number;
  /** the server's CPU use, in cores */
  serverCores: number;
  otherCores: number;
}

export interface ScaleReport {
  db: Db;
  dataset: Dataset;
  settings: { connections: number; duration: number; warmup: number; repeat: number; server: string; rateLimit: string };
  load: LoadRow[];
  rate: RateRow[];
  serviceHwmMiB: number;
  /** VmHWM just before the compressed case (null when it did not run) */
  serviceHwmBeforeCompressionMiB: number | null;
  serviceIdleRssMiB: number;
  bareHwmMiB: number | null;
  verdicts: string[];
  /** the MCP server's comparison with REST (lib/mcp.ts), null when it did not run */
  mcp: McpReport | null;
  /** the rate-limit comparison (lib/limits.ts), null when it did not run at this scale */
  limits: LimitsReport | null;
  /** the SDK's auto-paging walk (lib/sdk-paging.ts), null when it did not run */
  sdkPaging: SdkPagingReport | null;
  /** the backup case (lib/backup.ts), null when it did not run */
  backup: BackupReport | null;
}

const f0 = (n: number) => (Number.isFinite(n) ? Math.round(n).toLocaleString('en-US') : '–');
const f1 = (n: number) => (Number.isFinite(n) ? n.toFixed(1) : '–');

export function table(head: string[], rows: string[][], align: ('l' | 'r')[]): string {
  const sep = align.map((a) => (a === 'r' ? '---:' : '---'));
  return [head, sep, ...rows].map((r) => `| ${r.join(' | ')} |`).join('\n');
}

const f2 = (n: number) => (Number.isFinite(n) ? n.toFixed(2) : '–');

export function loadTable(rows: LoadRow[]): string {
  const db = rows.some((r) => r.dbCpuMsPerReq !== undefined);
  return table(
    [
      'case',
      'request',
      'req/s',
      'p50 ms',
      'p99 ms',
      'p99.9 ms',
      'max ms',
      'first request ms',
      'non-2xx + errors',
      'KB/response',
      'server CPU ms/req',
      ...(db ? ['PostgreSQL CPU ms/req'] : []),
      'peak RSS MiB',
      'other load (cores)',
    ],
    rows.map((r) => [
      r.label,
      `\`${r.path}\``,
      f0(r.reqPerSec),
      f1(r.p50),
      f1(r.p99),
      f1(r.p999),
      f1(r.max),
      f1(r.firstMs ?? NaN),
      String(r.bad),
      f1(r.kbPerResponse),
      f2(r.cpuMsPerReq),
      ...(db ? [f2(r.dbCpuMsPerReq ?? NaN)] : []),
      f0(r.peakRssMiB),
      f2(r.otherCores),
    ]),
    ['l', 'l', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r', ...(db ? ['r' as const] : []), 'r', 'r'],
  );
}

export function rateTable(rows: RateRow[]): string {
  const db = rows.some((r) => r.dbCpuMsPerReq !== undefined);
  return table(
    [
      'case',
      'request',
      'offered req/s',
      'achieved req/s',
      'p50 ms',
      'p99 ms',
      'max ms',
      'non-2xx + errors',
      'server CPU ms/req',
      ...(db ? ['PostgreSQL CPU ms/req'] : []),
      'server busy (cores)',
      'peak RSS MiB',
      'other load (cores)',
    ],
    rows.map((r) => [
      r.label,
      `\`${r.path}\``,
      f0(r.offered),
      f0(r.achieved),
      f1(r.p50),
      f1(r.p99),
      f1(r.max),
      String(r.bad),
      f2(r.cpuMsPerReq),
      ...(db ? [f2(r.dbCpuMsPerReq ?? NaN)] : []),
      f2(r.serverCores),
      f0(r.peakRssMiB),
      f2(r.otherCores),
    ]),
    ['l', 'l', 'r', 'r', 'r', 'r', 'r', 'r', 'r', ...(db ? ['r' as const] : []), 'r', 'r', 'r'],
  );
}

export function machineTable(m: Machine): string {
  return table(
    ['machine', ''],
    [
      ['CPU', `${m.cpu} × ${m.cores} (logical cores)`],
      ['memory', `${m.memoryGiB} GiB`],
      ['OS', m.os],
      ['Node.js', m.node],
      ['date', m.date],
    ],
    ['l', 'l'],
  );
}

export function scaleSection(r: ScaleReport): string {
  const d = r.dataset;
  const others = d.clinics.slice(1);
  const clinics = [
    `${d.big.citas.toLocaleString('en-US')} citas, ${d.big.clientas.toLocaleString('en-US')} clientas, ` +
      `${d.big.llamadas.toLocaleString('en-US')} llamadas in the clinic under load (scale ${d.big.scale})`,
    others.length
      ? `${others.length} other clinics beside it (${others.map((c) => `${c.citas.toLocaleString('en-US')} citas`).join(', ')})`
      : 'no other clinics',
  ].join('; ');
  return [
    `### ${DB_NAME[r.db]}, ${d.big.citas.toLocaleString('en-US')} appointments (scale ${d.big.scale})`,
    '',
    `Data: ${clinics}. Built in ${f0(d.buildSeconds)} s. ` +
      `Load: ${r.settings.connections} connections, ${r.settings.duration} s per case after ${r.settings.warmup} s of warm-up` +
      `${r.settings.repeat > 1 ? `, median of ${r.settings.repeat} runs` : ''}; ` +
      `server: ${r.settings.server}; rate limit raised to ${r.settings.rateLimit}.`,
    '',
    'Closed loop (as fast as the server answers):',
    '',
    loadTable(r.load),
    '',
    'Open loop (a request starts every 1/rate s whether or not earlier ones were answered; latency counts from the instant it was due):',
    '',
    rateTable(r.rate),
    '',
    `Service process memory: ${f0(r.serviceIdleRssMiB)} MiB RSS when ready, peak (VmHWM) ${f0(r.serviceHwmMiB)} MiB over the whole run` +
      (r.serviceHwmBeforeCompressionMiB !== null
        ? `, ${f0(r.serviceHwmBeforeCompressionMiB)} MiB before the compressed case (run last).`
        : '.') +
      (r.bareHwmMiB !== null ? ` Bare route process peak: ${f0(r.bareHwmMiB)} MiB.` : ''),
    '',
    ...r.verdicts.map((v) => `- ${v}`),
  ].join('\n');
}

/**
 * The growth series: for each endpoint, p50 and req/s at every scale, and p50 at the largest
 * scale over p50 at the smallest against GROWTH_GOAL. Null with fewer than two scales.
 */
export function growthTable(scales: ScaleReport[]): string | null {
  if (scales.length < 2) return null;
  const sorted = [...scales].sort((a, b) => a.dataset.big.citas - b.dataset.big.citas);
  const first = sorted[0]!;
  const last = sorted[sorted.length - 1]!;
  const k = (n: number) => (n >= 1_000_000 ? `${n / 1_000_000}M` : n >= 1000 ? `${n / 1000}k` : String(n));
  const ids = first.load.map((r) => r.id).filter((id) => sorted.every((s) => s.load.some((r) => r.id === id)));
  const head = [
    'case',
    ...sorted.map((s) => `p50 ms @ ${k(s.dataset.big.citas)}`),
    ...sorted.map((s) => `req/s @ ${k(s.dataset.big.citas)}`),
    `p50 ${k(last.dataset.big.citas)} / ${k(first.dataset.big.citas)}`,
    `≤ ${GROWTH_GOAL}×`,
    ...sorted.map((s) => `first request ms @ ${k(s.dataset.big.citas)}`),
  ];
  const rows = ids.map((id) => {
    const at = (s: ScaleReport) => s.load.find((r) => r.id === id)!;
    const ratio = at(last).p50 / at(first).p50;
    return [
      at(first).label,
      ...sorted.map((s) => f1(at(s).p50)),
      ...sorted.map((s) => f0(at(s).reqPerSec)),
      // The bare route is the reference of the side-by-side check, not an endpoint of the service.
      `${f2(ratio)}×`,
      id === 'bare' ? 'reference' : Number.isFinite(ratio) ? (ratio <= GROWTH_GOAL ? 'met' : '**not met**') : '–',
      ...sorted.map((s) => f1(at(s).firstMs ?? NaN)),
    ];
  });
  return table(head, rows, [
    'l',
    ...sorted.map(() => 'r' as const),
    ...sorted.map(() => 'r' as const),
    'r',
    'l',
    ...sorted.map(() => 'r' as const),
  ]);
}

export function resultsSection(m: Machine, db: Db, scales: ScaleReport[]): string {
  const growth = growthTable(scales);
  return [
    resultsStart(db),
    '',
    `## Results: ${DB_NAME[db]}`,
    '',
    `Written by \`npm run bench -- --db ${db}\`; the text outside this section (including the other database's results) is not touched.`,
    '',
    machineTable(m),
    '',
    ...(growth
      ? [
          `### ${DB_NAME[db]}: growth series`,
          '',
          `Closed loop, ${scales[0]!.settings.connections} connections; ` +
            `the goal is p50 at the largest scale within ${GROWTH_GOAL}× of p50 at the smallest.`,
          '',
          growth,
          '',
        ]
      : []),
    ...scales.flatMap((s) => [scaleSection(s), '']),
    resultsEnd(db),
  ].join('\n');
}

/**
 * Replaces the `db` results section of `file` (between its markers; `markers`: another section,
 * e.g. the rate-limit comparison's), keeping the prose and the other sections. A sqlite run also
 * replaces the single section of earlier versions.
 */
export function writeResults(
  file: string,
  db: Db,
  section: string,
  markers: { start: string; end: string } = { start: resultsStart(db), end: resultsEnd(db) },
): void {
  const before = fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : '# Benchmarks\n';
  const replace = (text: string, start: string, end: string): string | null => {
    const a = text.indexOf(start);
    const b = text.indexOf(end, a);
    return a >= 0 && b > a ? text.slice(0, a) + section + text.slice(b + end.length) : null;
  };
  const next =
    replace(before, markers.start, markers.end) ??
    (db === 'sqlite' && markers.start === resultsStart(db) ? replace(before, LEGACY_START, LEGACY_END) : null) ??
    `${before.trimEnd()}\n\n${section}\n`;
  fs.writeFileSync(file, next);
}
