// The benchmark's cases: one per figure a target needs, each on the server it measures, and the
// check of its first answer (a benchmark of error responses would be worthless).
import type { Dataset } from './dataset.js';
import type { ChildServer } from './processes.js';

type Json = Record<string, unknown>;

/**
 * The processes under load (lib/servers.ts):
 *  - bare: plain Fastify + better-sqlite3 running the same query (bench/bare-route.ts);
 *  - cold: the service with the page cache off (PAGE_CACHE_MB=0), the request log on;
 *  - nolog: the same with the request log off (REQUEST_LOG_DAYS=0);
 *  - kept: the service with the page cache on (its default size);
 *  - mcp: a cold service of its own for the MCP tool call and its REST twin, so that the cold
 *    service's memory is the cold page's alone;
 *  - traced: the cold service exporting traces (OTEL_EXPORTER_OTLP_ENDPOINT) to a real OTLP
 *    receiver on loopback that accepts and discards them (lib/otlp-sink.ts): tracing's cost;
 *  - platformatic: Platformatic DB's generated REST API on a copy of the same data (lib/platformatic.ts).
 */
export type Target = 'bare' | 'cold' | 'nolog' | 'kept' | 'mcp' | 'traced' | 'platformatic';

/** The cold page's range of fecha_hora (epoch seconds, end excluded): the default 30 days. */
export interface Range {
  start: number;
  end: number;
}

export interface Case {
  id: string;
  label: string;
  target: Target;
  path: string;
  /** the query string, when it names the data set's clinic and range */
  query?: (ds: Dataset, range: Range) => string;
  /** where the answer's total is, when not in the body's `total` */
  totalOf?: (headers: Headers) => unknown;
  method?: 'GET' | 'POST';
  body?: string;
  headers?: Record<string, string>;
  /** null when the (parsed) body is the expected page, else what is wrong */
  check: (body: Json) => string | null;
}

/** The page every case serves: the clinic's default 30 days of citas, 100 of them. */
const PAGE = '/api/v1/citas?limit=100';

function page(key: string, items: unknown): string | null {
  if (!Array.isArray(items)) return `no "${key}" array`;
  if (items.length !== 100) return `"${key}" has ${items.length} items, expected 100 (a larger --scale?)`;
  return typeof (items[0] as Json | undefined)?.id === 'string' ? null : 'items have no "id"';
}
const citasPage = (body: Json) => page('citas', body.citas);

/** A tool call of the MCP server (POST /mcp, JSON-RPC, stateless: no initialize before it). */
const MCP_CALL = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'list_citas', arguments: { limit: 100 } } });

export const CASES: Case[] = [
  { id: 'bare', label: 'bare route (reference)', target: 'bare', path: '/bare/citas', check: citasPage },
  { id: 'citas', label: 'cold page (PAGE_CACHE_MB=0)', target: 'cold', path: PAGE, check: citasPage },
  {
    // Its generated route cannot join clientas (no name or phone) and answers a bare array, the
    // total in a header (totalCount=true); its maximum limit is 100.
    id: 'platformatic',
    label: 'Platformatic DB, same citas page (no join)',
    target: 'platformatic',
    path: '/citas',
    query: (ds, range) =>
      `?where.clinicId.eq=${ds.big.id}&where.fechaHora.gte=${range.start}&where.fechaHora.lt=${range.end}` +
      '&orderby.fechaHora=asc&orderby.id=asc&limit=100&totalCount=true',
    totalOf: (headers) => Number(headers.get('x-total-count')),
    check: (body) => page('body', body),
  },
  { id: 'citas-nolog', label: 'cold page, request log off (REQUEST_LOG_DAYS=0)', target: 'nolog', path: PAGE, check: citasPage },
  { id: 'citas-traced', label: 'cold page, traces exported over OTLP/HTTP', target: 'traced', path: PAGE, check: citasPage },
  { id: 'citas-kept', label: 'kept page (page cache on)', target: 'kept', path: PAGE, check: citasPage },
  { id: 'mcp-rest', label: 'cold page, beside the MCP call', target: 'mcp', path: PAGE, check: citasPage },
  {
    id: 'mcp',
    label: 'MCP tool call list_citas {"limit":100}',
    target: 'mcp',
    path: '/mcp',
    method: 'POST',
    body: MCP_CALL,
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    check: (body) => {
      const result = body.result as { structuredContent?: Json; isError?: boolean } | undefined;
      if (!result || result.isError) return `no result: ${JSON.stringify(body).slice(0, 200)}`;
      return citasPage(result.structuredContent ?? {});
    },
  },
];

/** The cases with their query strings filled in for the data set and the range. */
export function withQueries(cases: readonly Case[], ds: Dataset, range: Range): Case[] {
  return cases.map((c) => (c.query ? { ...c, path: c.path + c.query(ds, range) } : c));
}

/** One request of case `c`, checked; throws saying what was wrong. Returns the page's `total` (for the bare route's check). */
export async function verify(c: Case, server: ChildServer, ds: Dataset, log: (line: string) => void): Promise<unknown> {
  const res = await fetch(server.baseUrl + c.path, {
    method: c.method ?? 'GET',
    body: c.body,
    // fetch() would ask for gzip by default; ask for what the load asks for.
    headers: { authorization: `Bearer ${ds.apiKey}`, 'accept-encoding': 'identity', ...c.headers },
    signal: AbortSignal.timeout(10_000),
  });
  const text = await res.text();
  if (res.status !== 200) throw new Error(`case ${c.id}: ${c.method ?? 'GET'} ${c.path} answered ${res.status}: ${text.slice(0, 300)}`);
  let body: Json;
  try {
    body = JSON.parse(text) as Json;
  } catch {
    throw new Error(`case ${c.id}: ${c.path} did not answer JSON: ${text.slice(0, 300)}`);
  }
  const problem = c.check(body);
  if (problem) throw new Error(`case ${c.id}: ${c.path}: unexpected body: ${problem}`);
  const total = c.totalOf
    ? c.totalOf(res.headers)
    : (body.total ?? ((body.result as Json | undefined)?.structuredContent as Json | undefined)?.total);
  log(`  ok  ${c.id.padEnd(12)} 200, total=${String(total)}`);
  return total;
}
