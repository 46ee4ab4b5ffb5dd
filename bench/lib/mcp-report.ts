// Markdown for the MCP server's comparison with REST (lib/mcp.ts): its own section of
// docs/benchmarks.md, per database, so that `--cases mcp` alone writes its figures without
// replacing the cases' (and the other way round), with the verdicts against the issue's goals.
import { median } from '../scale/common.js';
import {
  MCP_MEMORY_CLIENTS,
  MCP_MEMORY_REQUESTS,
  MCP_MEMORY_TARGET,
  MCP_TIME_TARGET,
  REST_PATH,
  type McpMemoryReport,
  type McpReport,
} from './mcp.js';
import { machineTable, table, type Db, type Machine } from './report.js';

export const mcpStart = (db: Db) => `<!-- bench:mcp:${db}:start -->`;
export const mcpEnd = (db: Db) => `<!-- bench:mcp:${db}:end -->`;

const spread = (xs: number[]) => `${Math.min(...xs).toFixed(2)}–${Math.max(...xs).toFixed(2)}×`;

export function mcpVerdicts(r: McpReport): string[] {
  const p50 = median(r.p50Ratios);
  const cpu = median(r.cpuRatios);
  const bad = r.time.reduce((n, row) => n + row.bad, 0);
  return [
    'The citas page of 100 as an MCP tool call vs the same REST request, each request timed alone, the sides alternating ' +
      `(${r.p50Ratios.length} rounds): median time ${p50.toFixed(2)}× REST's (median of the rounds; spread ${spread(r.p50Ratios)}), ` +
      `server main-thread CPU per request ${cpu.toFixed(2)}× (spread ${spread(r.cpuRatios)})${bad ? `, ${bad} answers not 200` : ''}: ` +
      `${p50 <= MCP_TIME_TARGET && bad === 0 ? 'met' : '**not met**'} (target: within ${MCP_TIME_TARGET}× the median time).`,
    mcpMemoryVerdict(r.memory),
  ];
}

function mcpMemoryVerdict(r: McpMemoryReport): string {
  const ratio = r.mcpMiB / r.restMiB;
  const bad = r.rows.reduce((n, row) => n + row.bad, 0);
  const mark = ratio <= MCP_MEMORY_TARGET && bad === 0 ? 'met' : '**not met**';
  const ratios = r.rows
    .filter((x) => x.side === 'mcp')
    .flatMap((m) => r.rows.filter((x) => x.side === 'rest' && x.round === m.round).map((s) => m.collectedMiB / s.collectedMiB));
  return (
    `Memory left by ${MCP_MEMORY_REQUESTS.toLocaleString('en-US')} requests from ${MCP_MEMORY_CLIENTS} concurrent connections, a ` +
    `fresh process per side and round, RSS after a full collection (median of ${r.rows.length / 2} rounds): MCP ` +
    `${r.mcpMiB.toFixed(1)} MiB vs REST ${r.restMiB.toFixed(1)} MiB (${ratio.toFixed(2)}×; rounds ` +
    `${spread(ratios)})${bad ? `, ${bad} non-2xx or errors` : ''}: ${mark} (target: within ` +
    `${Math.round((MCP_MEMORY_TARGET - 1) * 100)}%). A second after the last answer, before the collection: ` +
    `${r.mcpAfterMiB.toFixed(1)} vs ${r.restAfterMiB.toFixed(1)} MiB (${(r.mcpAfterMiB / r.restAfterMiB).toFixed(2)}×).`
  );
}

export function mcpTimeTable(r: McpReport): string {
  const f2 = (n: number) => (Number.isFinite(n) ? n.toFixed(2) : '–');
  return table(
    [
      'round',
      'side',
      'requests',
      'median ms',
      'p90 ms',
      'p99 ms',
      'server main-thread CPU ms/req',
      'MCP/REST median',
      'not 200',
      'other load (cores)',
    ],
    r.time.map((row) => [
      String(row.round),
      row.side === 'rest' ? 'REST' : 'MCP',
      String(row.requests),
      f2(row.p50),
      f2(row.p90),
      f2(row.p99),
      f2(row.cpuMsPerReq),
      row.side === 'mcp' ? `${f2(r.p50Ratios[row.round - 1]!)}×` : '',
      String(row.bad),
      f2(row.otherCores),
    ]),
    ['r', 'l', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r'],
  );
}

export function mcpMemoryTable(r: McpMemoryReport): string {
  const f1 = (n: number) => (Number.isFinite(n) ? n.toFixed(1) : '–');
  return table(
    [
      'round',
      'side',
      'RSS when ready MiB',
      'RSS 1 s after MiB',
      'RSS after full GC MiB',
      'heap in use after GC MiB',
      'peak RSS MiB',
      'seconds',
      'answers',
      'other load (cores)',
    ],
    r.rows.map((row) => [
      String(row.round),
      row.side === 'rest' ? 'REST' : 'MCP',
      f1(row.idleMiB),
      f1(row.afterMiB),
      f1(row.collectedMiB),
      f1(row.heapUsedMiB),
      f1(row.hwmMiB),
      f1(row.seconds),
      row.statuses,
      row.otherCores.toFixed(2),
    ]),
    ['r', 'l', 'r', 'r', 'r', 'r', 'r', 'r', 'l', 'r'],
  );
}

/** The comparison's tables, for the terminal and the section. */
export function mcpTables(r: McpReport): string {
  return [
    `Time: the same page, \`GET ${REST_PATH}\` and the tool call list_citas {"limit":100} on \`/mcp\` (its structuredContent checked ` +
      'to be the REST body), on one service process, one request at a time on a keep-alive connection per side, the sides alternating ' +
      'every 20 requests; each request timed from its first byte out to the last byte of its answer:',
    '',
    mcpTimeTable(r),
    '',
    `Memory: ${MCP_MEMORY_REQUESTS.toLocaleString('en-US')} requests from ${MCP_MEMORY_CLIENTS} connections to a fresh service ` +
      'process per side and round; RSS a second after the last answer, ' +
      "then after V8's last-resort collection (`bench/gc-on-signal.mjs`):",
    '',
    mcpMemoryTable(r.memory),
  ].join('\n');
}

/** The options this run was given, without where it kept its files (to reproduce it elsewhere). */
function commandLine(): string {
  const args = process.argv.slice(2);
  const kept: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a === '--data-dir' || a === '--doc') i++;
    else if (!a.startsWith('--data-dir=') && !a.startsWith('--doc=')) kept.push(a);
  }
  return kept.join(' ');
}

export function mcpSection(m: Machine, db: Db, runs: { citas: number; scale: number; report: McpReport }[]): string {
  return [
    mcpStart(db),
    '',
    `## MCP vs REST: ${db === 'sqlite' ? 'SQLite' : 'PostgreSQL'}`,
    '',
    `Written by \`npm run bench -- --db ${db}\` (or \`--cases mcp\`); the rest of this file is not touched. ` +
      `This run: \`npm run bench -- ${commandLine()}\`. On a machine shared with other programs, ` +
      `the "other load" columns say how much of its ${m.cores} cores they took.`,
    '',
    machineTable(m),
    '',
    ...runs.flatMap((r) => [
      `### ${r.citas.toLocaleString('en-US')} citas (scale ${r.scale})`,
      '',
      mcpTables(r.report),
      '',
      ...mcpVerdicts(r.report).map((v) => `- ${v}`),
      '',
    ]),
    mcpEnd(db),
  ].join('\n');
}
