// Markdown for the terminal and for docs/benchmarks.md: the machine, the data set, the figures.
import fs from 'node:fs';
import os from 'node:os';
import type { Dataset } from './dataset.js';

export const RESULTS_START = '<!-- bench:results:start -->';
export const RESULTS_END = '<!-- bench:results:end -->';

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
  /** cores used by other programs during the measurement */
  otherCores: number;
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
  /** the server's CPU use, in cores */
  serverCores: number;
  otherCores: number;
}

export interface ScaleReport {
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
}

const f0 = (n: number) => (Number.isFinite(n) ? Math.round(n).toLocaleString('en-US') : '–');
const f1 = (n: number) => (Number.isFinite(n) ? n.toFixed(1) : '–');

export function table(head: string[], rows: string[][], align: ('l' | 'r')[]): string {
  const sep = align.map((a) => (a === 'r' ? '---:' : '---'));
  return [head, sep, ...rows].map((r) => `| ${r.join(' | ')} |`).join('\n');
}

const f2 = (n: number) => (Number.isFinite(n) ? n.toFixed(2) : '–');

export function loadTable(rows: LoadRow[]): string {
  return table(
    ['case', 'request', 'req/s', 'p50 ms', 'p99 ms', 'p99.9 ms', 'max ms', 'non-2xx + errors', 'KB/response', 'server CPU ms/req', 'peak RSS MiB', 'other load (cores)'],
    rows.map((r) => [r.label, `\`${r.path}\``, f0(r.reqPerSec), f1(r.p50), f1(r.p99), f1(r.p999), f1(r.max), String(r.bad), f1(r.kbPerResponse), f2(r.cpuMsPerReq), f0(r.peakRssMiB), f2(r.otherCores)]),
    ['l', 'l', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r'],
  );
}

export function rateTable(rows: RateRow[]): string {
  return table(
    ['case', 'request', 'offered req/s', 'achieved req/s', 'p50 ms', 'p99 ms', 'max ms', 'non-2xx + errors', 'server CPU ms/req', 'server busy (cores)', 'peak RSS MiB', 'other load (cores)'],
    rows.map((r) => [r.label, `\`${r.path}\``, f0(r.offered), f0(r.achieved), f1(r.p50), f1(r.p99), f1(r.max), String(r.bad), f2(r.cpuMsPerReq), f2(r.serverCores), f0(r.peakRssMiB), f2(r.otherCores)]),
    ['l', 'l', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r'],
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
    `${d.big.citas.toLocaleString('en-US')} citas, ${d.big.clientas.toLocaleString('en-US')} clientas, ${d.big.llamadas.toLocaleString('en-US')} llamadas in the clinic under load (scale ${d.big.scale})`,
    others.length
      ? `${others.length} other clinics beside it (${others.map((c) => `${c.citas.toLocaleString('en-US')} citas`).join(', ')})`
      : 'no other clinics',
  ].join('; ');
  return [
    `### ${d.big.citas.toLocaleString('en-US')} appointments (scale ${d.big.scale})`,
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
      (r.serviceHwmBeforeCompressionMiB !== null ? `, ${f0(r.serviceHwmBeforeCompressionMiB)} MiB before the compressed case (run last).` : '.') +
      (r.bareHwmMiB !== null ? ` Bare route process peak: ${f0(r.bareHwmMiB)} MiB.` : ''),
    '',
    ...r.verdicts.map((v) => `- ${v}`),
  ].join('\n');
}

export function resultsSection(m: Machine, scales: ScaleReport[]): string {
  return [
    RESULTS_START,
    '',
    '## Results',
    '',
    'Written by `npm run bench`; the text outside this section is not touched.',
    '',
    machineTable(m),
    '',
    ...scales.flatMap((s) => [scaleSection(s), '']),
    RESULTS_END,
  ].join('\n');
}

/** Replaces the results section of `file` (between the markers), keeping the prose around it. */
export function writeResults(file: string, section: string): void {
  const before = fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : '# Benchmarks\n';
  const a = before.indexOf(RESULTS_START);
  const b = before.indexOf(RESULTS_END);
  const next = a >= 0 && b > a
    ? before.slice(0, a) + section + before.slice(b + RESULTS_END.length)
    : `${before.trimEnd()}\n\n${section}\n`;
  fs.writeFileSync(file, next);
}
