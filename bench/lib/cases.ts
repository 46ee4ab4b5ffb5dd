// The benchmark's cases: what each requests, and the check that its first answer has the
// expected shape (a benchmark of error responses would be worthless).
import type { Dataset } from './dataset.js';
import { accessToken } from './oauth-token.js';
import type { ChildServer } from './processes.js';

export type Json = Record<string, unknown>;
/** `service-nolog`: the same service with REQUEST_LOG_DAYS=0 (no request log), for the log's cost side by side. */
export type Target = 'bare' | 'service' | 'service-nolog';

export interface Case {
  id: string;
  label: string;
  target: Target;
  path: string;
  /** the request as the report shows it, when its path alone does not say it */
  shown?: string;
  headers?: Record<string, string>;
  /** The status every answer must have (default 200); a 304 case is checked on its headers only. */
  status?: number;
  /**
   * A request that depends on the data set (a cursor, an ETag): made by asking the server once,
   * before the case's check; its path and headers replace the case's.
   */
  prepare?: (server: ChildServer, ds: Dataset) => Promise<{ path: string; headers: Record<string, string> }>;
  /**
   * Measured after everything else: compression buffers (brotli's above all) raise the
   * process's resident memory, which it keeps, and would inflate the other cases' RSS.
   */
  runLast?: boolean;
  /** null when the (decoded) body has the expected shape, else what is wrong. */
  check: (body: Json, res: Response, ds: Dataset) => string | null;
  /** A case whose answer is not JSON (CSV): its text checked instead; `check` is then not called. */
  checkText?: (text: string, res: Response) => string | null;
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
    if (opts.timestamp && !RFC3339.test(String(first[opts.timestamp])))
      return `"${opts.timestamp}" is ${String(first[opts.timestamp])}, not RFC 3339 with an offset`;
    return null;
  };
}

const auth = (ds: Dataset) => ({ authorization: `Bearer ${ds.apiKey}`, 'accept-encoding': 'identity' });

/** A tool call of the MCP server (POST /mcp, JSON-RPC, stateless: no initialize before it). */
export function mcpToolCall(name: string, args: Json): string {
  return JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } });
}
export const MCP_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

/** The feed at its head with the ETag of that answer: what a follower that is up to date sends. */
async function currentFeed(server: ChildServer, ds: Dataset) {
  const now = await fetch(`${server.baseUrl}/api/v1/eventos?cursor=now`, { headers: auth(ds) });
  if (now.status !== 200) throw new Error(`GET /api/v1/eventos?cursor=now answered ${now.status}: ${await now.text()}`);
  const path = `/api/v1/eventos?cursor=${((await now.json()) as { next_cursor: string }).next_cursor}&limit=500`;
  const first = await fetch(server.baseUrl + path, { headers: auth(ds) });
  const etag = first.headers.get('etag');
  if (first.status !== 200 || !etag) throw new Error(`GET ${path} answered ${first.status} without an ETag`);
  return { path, headers: { 'if-none-match': etag } };
}

/** `/me`'s answer for a principal of every scope, named `name` (the key, or the app of a token). */
function meCheck(name: string): Case['check'] {
  return (body) => {
    const key = body.api_key as { nombre?: string; scopes?: unknown[] } | undefined;
    if (key?.nombre !== name) return `api_key.nombre is ${JSON.stringify(key?.nombre)}, expected ${JSON.stringify(name)}`;
    if (key.scopes?.length !== 5) return `api_key.scopes is ${JSON.stringify(key.scopes)}, expected all five`;
    return null;
  };
}

export const CASES: Case[] = [
  {
    id: 'bare',
    label: 'bare route (reference)',
    target: 'bare',
    path: '/bare/citas',
    check: listCheck('citas', 100),
  },
  {
    id: 'citas',
    label: 'citas, default 30 days',
    target: 'service',
    path: '/api/v1/citas?limit=100',
    check: listCheck('citas', 100, { timestamp: 'fecha_hora' }),
  },
  {
    // The same cold page (no page cache) from a second service with the request log off
    // (REQUEST_LOG_DAYS=0), right after it: the verdict compares the two (the log's cost).
    id: 'citas-nolog',
    label: 'citas, default 30 days, request log off (REQUEST_LOG_DAYS=0)',
    target: 'service-nolog',
    path: '/api/v1/citas?limit=100',
    check: listCheck('citas', 100, { timestamp: 'fecha_hora' }),
  },
  {
    // Who am I: no query of its own, so authentication (the key's or the token's cache), the rate
    // limit and the request log are most of its cost. The reference of me-token.
    id: 'me',
    label: 'me, with an API key',
    target: 'service',
    path: '/api/v1/me',
    check: meCheck('benchmark'),
  },
  {
    // The same request with an OAuth access token of the same scopes (granted by the clinic's owner
    // through the real flow, lib/oauth-token.ts), right after it: the verdict compares the two.
    id: 'me-token',
    label: 'me, with an OAuth access token',
    target: 'service',
    path: '/api/v1/me',
    shown: 'GET /api/v1/me (Authorization: Bearer <OAuth access token>)',
    prepare: async (server, ds) => ({
      path: '/api/v1/me',
      headers: { authorization: `Bearer ${await accessToken(server, ds)}` },
    }),
    check: meCheck('Benchmark app'),
  },
  {
    id: 'citas-br',
    label: 'citas, client accepts br/gzip',
    target: 'service',
    path: '/api/v1/citas?limit=100',
    headers: { 'accept-encoding': 'gzip, deflate, br' },
    runLast: true,
    check: (body, res, ds) => (res.headers.get('content-encoding') ? listCheck('citas', 100)(body, res, ds) : 'response is not compressed'),
  },
  {
    id: 'clientas',
    label: 'clientas, first page',
    target: 'service',
    path: '/api/v1/clientas?limit=100',
    check: listCheck('clientas', 100, { total: (ds) => ds.big.clientas, timestamp: 'created_at' }),
  },
  {
    id: 'clientas-q-name',
    label: 'clientas, name search',
    target: 'service',
    path: '/api/v1/clientas?q=mar&limit=100',
    check: listCheck('clientas', null),
  },
  {
    // A first name: its matches start with it, and sort after half of the clinic.
    id: 'clientas-q-first-name',
    label: 'clientas, first-name search',
    target: 'service',
    path: '/api/v1/clientas?q=maria&limit=100',
    check: listCheck('clientas', 100),
  },
  {
    // Three digits match ~1.5 % of the clientas: 35 at 10k. A 25-row page is full at every scale,
    // so the growth series compares the same work (a 100-row page would hold 35 rows at 10k and
    // 100 at 1M, and measure the response's size rather than the data's).
    id: 'clientas-q-phone',
    label: 'clientas, phone digits (25 per page)',
    target: 'service',
    path: '/api/v1/clientas?q=600&limit=25',
    check: listCheck('clientas', 25),
  },
  {
    // What a receptionist types: one client's number, spaced. It is the phone of the demo's first
    // client (seed 1), which every scale generates first.
    id: 'clientas-q-number',
    label: 'clientas, one phone number',
    target: 'service',
    path: '/api/v1/clientas?q=650%2026%2081%2080&limit=100',
    check: listCheck('clientas', null),
  },
  {
    id: 'llamadas',
    label: 'llamadas, default 7 days',
    target: 'service',
    path: '/api/v1/llamadas?limit=100',
    check: listCheck('llamadas', 100, { timestamp: 'fecha_hora' }),
  },
  {
    // The feed's reference: a route that answers a fixed 304, in the bare route's process.
    id: 'bare-304',
    label: 'bare route, fixed 304 (reference)',
    target: 'bare',
    path: '/bare/304',
    headers: { 'if-none-match': '"bare"' },
    status: 304,
    check: () => null,
  },
  {
    // A follower that is up to date polls its cursor with the ETag it got: nothing new, 304.
    id: 'eventos-304',
    label: 'eventos, current cursor + If-None-Match',
    target: 'service',
    path: '/api/v1/eventos?cursor=now',
    prepare: currentFeed,
    status: 304,
    check: () => null,
  },
  {
    id: 'citas-500',
    label: 'citas, a page of 500',
    target: 'service',
    path: '/api/v1/citas?limit=500',
    check: listCheck('citas', 500, { timestamp: 'fecha_hora' }),
  },
  {
    // The same page as CSV (Accept: text/csv), right after it: the verdict compares the two.
    id: 'citas-500-csv',
    label: 'citas, a page of 500 as CSV',
    target: 'service',
    path: '/api/v1/citas?limit=500',
    headers: { accept: 'text/csv' },
    check: () => 'not JSON',
    checkText: (text, res) => {
      if (res.headers.get('content-type') !== 'text/csv; charset=utf-8') return `content-type ${String(res.headers.get('content-type'))}`;
      const lines = text.split('\r\n');
      if (!lines[0]?.startsWith('id,fecha_hora,')) return `header row ${lines[0]?.slice(0, 40)}`;
      // the header, 500 records (no line breaks in the data set's fields), and the empty tail after the last CRLF
      if (lines.length !== 502) return `${lines.length - 2} records, expected 500`;
      if (!res.headers.get('x-total-count') || !res.headers.get('link')) return 'no X-Total-Count or Link';
      return null;
    },
  },
  {
    // The oldest 500 events of the data set's changes (lib/dataset.ts imports them).
    id: 'eventos-500',
    label: 'eventos, a page of 500',
    target: 'service',
    path: '/api/v1/eventos?limit=500',
    check: (body) => {
      const eventos = body.eventos;
      if (!Array.isArray(eventos) || eventos.length !== 500)
        return `"eventos" has ${Array.isArray(eventos) ? eventos.length : 'no'} items, expected 500`;
      if (typeof body.next_cursor !== 'string' || body.has_more !== true) return 'no next_cursor, or has_more is not true';
      return null;
    },
  },
];

/** Open-loop cases: the same requests at a fixed offered rate. */
export const RATE_CASES = ['bare', 'citas', 'bare-304', 'eventos-304'];

/** One request of case `c`, checked: its parsed body, or an error saying what was wrong. */
export async function verify(c: Case, server: ChildServer, ds: Dataset, log: (line: string) => void): Promise<Json> {
  const url = server.baseUrl + c.path;
  const res = await fetch(url, {
    // fetch() would ask for gzip by default; ask for what the load will ask for.
    headers: { authorization: `Bearer ${ds.apiKey}`, 'accept-encoding': 'identity', ...c.headers },
    signal: AbortSignal.timeout(10_000),
  });
  const text = await res.text();
  const request = `GET ${c.path}`;
  if (res.status !== (c.status ?? 200)) throw new Error(`case ${c.id}: ${request} answered ${res.status}: ${text.slice(0, 300)}`);
  if (c.status === 304) {
    if (text !== '' || !res.headers.get('etag')) throw new Error(`case ${c.id}: a 304 with a body or without an ETag`);
    log(`  ok  ${c.id.padEnd(17)} 304, ETag ${res.headers.get('etag')}`);
    return {};
  }
  if (c.checkText) {
    const problem = c.checkText(text, res);
    if (problem) throw new Error(`case ${c.id}: ${request}: unexpected body: ${problem}`);
    log(`  ok  ${c.id.padEnd(17)} 200, X-Total-Count ${String(res.headers.get('x-total-count'))}, ${res.headers.get('content-type')}`);
    return { total: Number(res.headers.get('x-total-count')) };
  }
  let body: Json;
  try {
    body = JSON.parse(text) as Json;
  } catch {
    throw new Error(`case ${c.id}: ${request} did not answer JSON: ${text.slice(0, 300)}`);
  }
  const problem = c.check(body, res, ds);
  if (problem) throw new Error(`case ${c.id}: ${request}: unexpected body: ${problem}`);
  const enc = res.headers.get('content-encoding');
  const total = body.total ?? ((body.result as Json | undefined)?.structuredContent as Json | undefined)?.total;
  log(`  ok  ${c.id.padEnd(17)} 200, total=${String(total)}${enc ? `, content-encoding: ${enc}` : ''}`);
  return body;
}
