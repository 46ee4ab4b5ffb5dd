// The run's figures as Markdown: the machine, each case's, and one line per target with its
// verdict (the targets of docs/benchmarks.md; a target is judged when its cases ran).
import os from 'node:os';

export interface Machine {
  cpu: string;
  cores: number;
  memoryGiB: number;
  os: string;
  date: string;
}

export function machine(): Machine {
  const cpus = os.cpus();
  return {
    cpu: cpus[0]?.model.trim() ?? 'unknown',
    cores: cpus.length,
    memoryGiB: Math.round((os.totalmem() / 2 ** 30) * 10) / 10,
    os: `${os.type()} ${os.release()} ${os.arch()}`,
    date: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
  };
}

/** A closed-loop case's figures (its median round). */
export interface LoadRow {
  id: string;
  label: string;
  reqPerSec: number;
  p50: number;
  p99: number;
  bad: number;
  /** the server's CPU time per request, in ms */
  cpuMsPerReq: number;
  /** the largest RSS sampled during the case, MiB */
  peakRssMiB: number;
  /** cores used by other programs during the measurement */
  otherCores: number;
}

/** The open-loop case: the cold page at a fixed offered rate. */
export interface RateRow {
  offered: number;
  achieved: number;
  p50: number;
  p99: number;
  bad: number;
  otherCores: number;
  /** every round's p99 (this row is the median round's), in the order they ran */
  p99Rounds: number[];
}

export interface RunFigures {
  load: LoadRow[];
  rate: RateRow | null;
  /** VmHWM of the cold service over its cases (closed and open loop), MiB */
  coldHwmMiB: number | null;
  /** VmHWM of the kept service, MiB, and its page cache's configured size */
  keptHwmMiB: number | null;
  pageCacheMiB: number;
  serviceNode: string;
}

/** The memory target as written, in decimal megabytes, and in the MiB that RSS is read in (190.7). */
const RSS_LIMIT_MB = 200;
const RSS_LIMIT_MIB = (RSS_LIMIT_MB * 1e6) / 2 ** 20;
/** A case during which other programs used this many cores is flagged. */
const NOISY_CORES = 0.2;

const f0 = (n: number) => (Number.isFinite(n) ? Math.round(n).toLocaleString('en-US') : '–');
const f1 = (n: number) => (Number.isFinite(n) ? n.toFixed(1) : '–');
const f2 = (n: number) => (Number.isFinite(n) ? n.toFixed(2) : '–');

function table(head: string[], rows: string[][]): string {
  const align = head.map((_, i) => (i < 2 ? '---' : '---:'));
  return [head, align, ...rows].map((r) => `| ${r.join(' | ')} |`).join('\n');
}

export function loadTable(rows: LoadRow[]): string {
  return table(
    ['case', 'id', 'req/s', 'p50 ms', 'p99 ms', 'non-200 + errors', 'server CPU ms/req', 'peak RSS MiB', 'other load (cores)'],
    rows.map((r) => [
      r.label,
      r.id,
      f0(r.reqPerSec),
      f1(r.p50),
      f1(r.p99),
      String(r.bad),
      f2(r.cpuMsPerReq),
      f0(r.peakRssMiB),
      f2(r.otherCores),
    ]),
  );
}

/** One line per target: the figure, met or not, and the target. */
export function targets(f: RunFigures): string[] {
  const out: string[] = [];
  const row = (id: string) => f.load.find((r) => r.id === id);
  const mark = (ok: boolean) => (ok ? 'met' : '**not met**');
  const ratio = (a: string, b: string, min: number, what: string) => {
    const x = row(a);
    const y = row(b);
    if (!x || !y) return;
    const r = x.reqPerSec / y.reqPerSec;
    out.push(
      `${what}: ${f0(x.reqPerSec)} vs ${f0(y.reqPerSec)} req/s = ${f2(r)}×: ${mark(r >= min && x.bad + y.bad === 0)} (target ≥ ${min}×).`,
    );
  };
  ratio('citas', 'bare', 1.3, 'Cold page vs the bare route');
  ratio('citas', 'platformatic', 1.4, 'Cold page vs Platformatic DB (its REST list, no join)');
  ratio('citas-kept', 'bare', 5, 'Kept page vs the bare route');
  if (f.rate)
    out.push(
      `Cold page at ${f0(f.rate.offered)} req/s offered (open loop): p99 ${f1(f.rate.p99)} ms` +
        `${f.rate.p99Rounds.length > 1 ? ` (median round; rounds: ${f.rate.p99Rounds.map(f1).join(', ')} ms)` : ''}, ` +
        `${f0(f.rate.achieved)} req/s answered: ` +
        `${mark(f.rate.p99 <= 10 && f.rate.bad === 0)} (target: p99 ≤ 10 ms).`,
    );
  if (f.coldHwmMiB !== null)
    out.push(
      `Peak RSS (VmHWM) of the cold service on Node ${f.serviceNode}: ${f1(f.coldHwmMiB)} MiB: ` +
        `${mark(f.coldHwmMiB <= RSS_LIMIT_MIB)} (target ≤ ${RSS_LIMIT_MB} MB = ${f1(RSS_LIMIT_MIB)} MiB).`,
    );
  if (f.keptHwmMiB !== null) {
    const limit = RSS_LIMIT_MIB + f.pageCacheMiB;
    out.push(
      `Peak RSS (VmHWM) of the kept-page service on Node ${f.serviceNode}: ${f1(f.keptHwmMiB)} MiB: ${mark(f.keptHwmMiB <= limit)} ` +
        `(target ≤ ${RSS_LIMIT_MB} MB + the page cache's ${f.pageCacheMiB} MiB = ${f1(limit)} MiB).`,
    );
  }
  ratio('citas', 'citas-nolog', 0.9, 'Request log on vs off (cold page)');
  const traced = row('citas-traced');
  const untraced = row('citas');
  if (traced && untraced)
    out.push(
      `Tracing on vs off (cold page, spans exported to a local receiver): ${f0(traced.reqPerSec)} vs ${f0(untraced.reqPerSec)} req/s = ` +
        `${f2(traced.reqPerSec / untraced.reqPerSec)}×, p99 ${traced.p99} vs ${untraced.p99} ms (no target: what tracing costs).`,
    );
  const mcp = row('mcp');
  const rest = row('mcp-rest');
  if (mcp && rest) {
    const r = rest.reqPerSec / mcp.reqPerSec;
    out.push(
      `MCP tool call vs the REST page, same process: ${f0(mcp.reqPerSec)} vs ${f0(rest.reqPerSec)} req/s: ` +
        `a call takes ${f2(r)}× the time: ` +
        `${mark(r <= 2.5 && mcp.bad + rest.bad === 0)} (target ≤ 2.5×).`,
    );
  }
  const noisy = [...f.load, ...(f.rate ? [{ label: 'open loop', otherCores: f.rate.otherCores }] : [])].filter(
    (r) => r.otherCores >= NOISY_CORES,
  );
  if (noisy.length)
    out.push(
      `**Other programs were busy** during: ${noisy.map((r) => `${r.label} (${f2(r.otherCores)} cores)`).join(', ')}; ` +
        'run again on a quiet machine.',
    );
  return out;
}

export function report(m: Machine, f: RunFigures, settings: string): string {
  return [
    `Machine: ${m.cpu} × ${m.cores}, ${m.memoryGiB} GiB, ${m.os}; service on Node ${f.serviceNode}; ${m.date}.`,
    settings,
    '',
    loadTable(f.load),
    '',
    ...targets(f).map((t) => `- ${t}`),
  ].join('\n');
}
