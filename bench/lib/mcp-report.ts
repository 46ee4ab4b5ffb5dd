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

export function mcpVerdicts(r: McpReport): string[] {
  const p50 = median(r.p50Ratios);
  const cpu = median(r.cpuRatios);
  const bad = r.time.reduce((n, row) => n + row.bad, 0);
  const list = (xs: number[]) => xs.map((x) => `${x.toFixed(2)}×`).join(', ');
  return [
    `The citas page of 100 as an MCP tool call vs the same REST request, ${r.p50Ratios.length} alternating rounds: p50 ${p50.toFixed(2)}× (rounds: ${list(r.p50Ratios)}), ` +
      `server CPU ${cpu.toFixed(2)}× (rounds: ${list(r.cpuRatios)}): ${Math.max(p50, cpu) <= MCP_TIME_TARGET && bad === 0 ? 'met' : '**not met**'} ` +
      `(target: within ${MCP_TIME_TARGET}× the median time).`,
    mcpMemoryVerdict(r.memory),
  ];
}

function mcpMemoryVerdict(r: McpMemoryReport): string {
  const ratio = r.mcpMiB / r.restMiB;
  const bad = r.rows.reduce((n, row) => n + row.bad, 0);
  const mark = ratio <= MCP_MEMORY_TARGET && bad === 0 ? 'met' : '**not met**';
  return (
    `Memory after ${MCP_MEMORY_REQUESTS.toLocaleString('en-US')} requests from ${MCP_MEMORY_CLIENTS} concurrent connections, a fresh process per side and round ` +
    `(median of ${r.rows.length / 2} rounds): MCP ${r.mcpMiB.toFixed(1)} MiB vs REST ${r.restMiB.toFixed(1)} MiB RSS (${ratio.toFixed(2)}×)` +
    `${bad ? `, ${bad} non-2xx or errors` : ''}: ${mark} (target: within ${Math.round((MCP_MEMORY_TARGET - 1) * 100)}%).`
  );
}

export function mcpTimeTable(r: McpReport): string {
  const f1 = (n: number) => (Number.isFinite(n) ? n.toFixed(1) : '–');
  return table(
    ['round', 'side', 'req/s', 'p50 ms', 'p99 ms', 'server CPU ms/req', 'non-2xx + errors', 'other load (cores)'],
    r.time.map((row) => [
      String(row.round),
      row.side === 'rest' ? 'REST' : 'MCP',
      row.reqPerSec.toFixed(0),
      f1(row.p50),
      f1(row.p99),
      row.cpuMsPerReq.toFixed(2),
      String(row.bad),
      row.otherCores.toFixed(2),
    ]),
    ['r', 'l', 'r', 'r', 'r', 'r', 'r', 'r'],
  );
}

export function mcpMemoryTable(r: McpMemoryReport): string {
  const f1 = (n: number) => (Number.isFinite(n) ? n.toFixed(1) : '–');
  return table(
    [
      'round',
      'side',
      'request',
      'RSS when ready MiB',
      'RSS after MiB',
      'peak RSS MiB',
      'seconds',
      'non-2xx + errors',
      'other load (cores)',
    ],
    r.rows.map((row) => [
      String(row.round),
      row.side === 'rest' ? 'REST' : 'MCP',
      row.side === 'rest' ? `\`GET ${REST_PATH}\`` : '`POST /mcp`: tools/call list_citas {"limit":100}',
      f1(row.idleMiB),
      f1(row.afterMiB),
      f1(row.hwmMiB),
      f1(row.seconds),
      String(row.bad),
      row.otherCores.toFixed(2),
    ]),
    ['r', 'l', 'l', 'r', 'r', 'r', 'r', 'r', 'r'],
  );
}

/** The comparison's tables, for the terminal and the section. */
export function mcpTables(r: McpReport): string {
  return [
    `Time: the same page (\`GET ${REST_PATH}\`, and the tool call list_citas {"limit":100} on \`/mcp\`), in alternating rounds on one service process:`,
    '',
    mcpTimeTable(r),
    '',
    `Memory: ${MCP_MEMORY_REQUESTS.toLocaleString('en-US')} requests from ${MCP_MEMORY_CLIENTS} connections to a fresh service process per side and round, RSS read a second after the last answer:`,
    '',
    mcpMemoryTable(r.memory),
  ].join('\n');
}

export function mcpSection(m: Machine, db: Db, runs: { citas: number; scale: number; report: McpReport }[]): string {
  return [
    mcpStart(db),
    '',
    `## MCP vs REST: ${db === 'sqlite' ? 'SQLite' : 'PostgreSQL'}`,
    '',
    `Written by \`npm run bench -- --db ${db}\` (or \`--cases mcp\`); the rest of this file is not touched.`,
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
