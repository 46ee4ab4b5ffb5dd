// Markdown for the backup case (lib/backup.ts): its own section of docs/benchmarks.md (SQLite
// only), so that `--cases backup` alone does not replace the other cases' figures.
import { PATH, type BackupReport, type RateStats } from './backup.js';
import { machineTable, table, type Machine } from './report.js';

export const backupStart = '<!-- bench:backup:sqlite:start -->';
export const backupEnd = '<!-- bench:backup:sqlite:end -->';

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
    r.rounds.flatMap((b, i) => [
      row(`round ${i + 1}: no backup`, r.baselines[i]!),
      row(`round ${i + 1}: while \`clinic-api backup\` runs (${f1(b.seconds)} s)`, b),
    ]),
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
