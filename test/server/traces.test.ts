// OpenTelemetry traces from a real `clinic-api serve` process to a real OTLP/HTTP receiver on
// 127.0.0.1 (JSON, as the exporter sends it): a server span per request with its route, status,
// clinic and key ids; the queries as child spans (SQL text, no values); a caller's `traceparent`
// continued, on the request and in an MCP call's `_meta`; an MCP tool span; and nothing secret or
// personal in any attribute. Without an endpoint, no tracing module is loaded at all.
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { openRuntime } from '../../src/runtime.js';
import { createClinic } from '../../src/services/accounts.js';
import { seedRecords } from '../helpers/app.js';
import { newPgDatabaseUrl } from '../helpers/db.js';
import { clientaRecord } from '../helpers/fixtures.js';
import { startReceiver as startWebhookReceiver } from '../helpers/receiver.js';
import { redisAvailable, startRedis, type RedisServer } from '../helpers/redis.js';
import { startServerProcess, type ServerProcess } from '../helpers/server-process.js';
import { until } from '../helpers/wait.js';

const RECORD_LOADS = path.resolve('test/cli/record-loads.mjs');

interface OtlpValue {
  stringValue?: string;
  intValue?: string | number;
  boolValue?: boolean;
  doubleValue?: number;
}
interface Span {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes: Record<string, string | number | boolean>;
  /** every attribute of the span and of its resource and scope, as text, for the "nothing secret" check */
  text: string;
}

const valueOf = (v: OtlpValue) => v.stringValue ?? (v.intValue !== undefined ? Number(v.intValue) : (v.boolValue ?? v.doubleValue ?? ''));

/** A receiver of OTLP/HTTP JSON trace exports: POST /v1/traces, answered with `answer.status` (the spans kept only on 200). */
async function startReceiver() {
  const spans: Span[] = [];
  const bodies: string[] = [];
  const answer = { status: 200, headers: [] as http.IncomingHttpHeaders[] };
  const server = http.createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => (body += c));
    req.on('end', () => {
      if (req.method !== 'POST' || req.url !== '/v1/traces' || !String(req.headers['content-type']).startsWith('application/json')) {
        res.writeHead(404).end();
        return;
      }
      answer.headers.push(req.headers);
      if (answer.status !== 200) {
        res.writeHead(answer.status, { 'content-type': 'application/json' }).end('{"message":"no such tenant"}');
        return;
      }
      bodies.push(body);
      const doc = JSON.parse(body) as {
        resourceSpans: {
          scopeSpans: { spans: (Omit<Span, 'attributes' | 'text'> & { attributes?: { key: string; value: OtlpValue }[] })[] }[];
        }[];
      };
      for (const rs of doc.resourceSpans)
        for (const ss of rs.scopeSpans)
          for (const s of ss.spans) {
            const attributes = Object.fromEntries((s.attributes ?? []).map((a) => [a.key, valueOf(a.value)]));
            spans.push({ ...s, attributes, text: JSON.stringify(s) });
          }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as { port: number }).port;
  return { spans, bodies, answer, endpoint: `http://127.0.0.1:${port}`, close: () => new Promise<void>((r) => server.close(() => r())) };
}

const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const CALLER_SPAN = '00f067aa0ba902b7';
const MCP_TRACE_ID = '0af7651916cd43dd8448eb211c80319c';
const MCP_CALLER_SPAN = 'b7ad6b7169203331';

describe('traces over OTLP/HTTP', () => {
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let server: ServerProcess;
  let loads: string;
  let clienta: { nombre: string; telefono: string | null; email: string | null };
  let search: string;

  beforeAll(async () => {
    receiver = await startReceiver();
    loads = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'clinic-traces-')), 'loads.txt');
    server = await startServerProcess({
      env: {
        OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
        OTEL_BSP_SCHEDULE_DELAY: '50',
        OTEL_SERVICE_NAME: 'clinic-api-test',
        RECORD_LOADS: loads,
      },
      nodeArgs: ['--import', RECORD_LOADS],
    });
    const auth = { authorization: `Bearer ${server.key}` };
    const first = (await (await fetch(`${server.baseUrl}/api/v1/clientas?limit=1`, { headers: auth })).json()) as {
      clientas: { nombre: string; telefono: string | null; email: string | null }[];
    };
    clienta = first.clientas[0]!;
    search = clienta.nombre.split(' ')[0]!;
    // The search, with a caller's trace to continue.
    const res = await fetch(`${server.baseUrl}/api/v1/clientas?q=${encodeURIComponent(search)}&limit=5`, {
      headers: { ...auth, traceparent: `00-${TRACE_ID}-${CALLER_SPAN}-01` },
    });
    expect(res.status).toBe(200);
    // An MCP tool call whose _meta carries the caller's trace (a search: its text is never recorded either).
    const mcp = await fetch(`${server.baseUrl}/mcp`, {
      method: 'POST',
      headers: { ...auth, accept: 'application/json, text/event-stream', 'content-type': 'application/json' },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: 'list_clientas', arguments: { q: search }, _meta: { traceparent: `00-${MCP_TRACE_ID}-${MCP_CALLER_SPAN}-01` } },
      }),
    });
    expect(mcp.status).toBe(200);
    await mcp.text();
    await until(
      () =>
        receiver.spans.some((s) => s.name.startsWith('tools/call')) &&
        receiver.spans.some((s) => s.name === 'POST /mcp') &&
        receiver.spans.some((s) => s.traceId === TRACE_ID && s.kind === 2),
      'the spans exported',
    );
  }, 120_000);

  afterAll(async () => {
    await server?.kill();
    await receiver?.close();
  });

  it('a server span per request: route template, status, clinic id and key id; the caller trace continued', () => {
    const span = receiver.spans.find((s) => s.traceId === TRACE_ID && s.kind === 2)!;
    expect(span.parentSpanId).toBe(CALLER_SPAN);
    expect(span.name).toBe('GET /api/v1/clientas');
    expect(span.attributes['http.route']).toBe('/api/v1/clientas');
    expect(span.attributes['http.response.status_code']).toBe(200);
    expect(span.attributes['url.path']).toBe('/api/v1/clientas');
    expect(span.attributes['clinic.id']).toMatch(/^[0-9a-f-]{36}$/);
    expect(span.attributes['clinic_api.key.id']).toEqual(expect.any(String));
    expect(receiver.bodies.some((b) => b.includes('"clinic-api-test"'))).toBe(true);
  });

  it('database queries as child spans: the SQL text, with no values', () => {
    const server = receiver.spans.find((s) => s.traceId === TRACE_ID && s.kind === 2)!;
    const queries = receiver.spans.filter((s) => s.traceId === TRACE_ID && s.attributes['db.system.name'] === 'sqlite');
    expect(queries.length).toBeGreaterThan(0);
    for (const q of queries) {
      expect(q.kind).toBe(3); // client
      expect(String(q.attributes['db.query.text'])).toMatch(/^\s*(select|with|insert|update|delete)\b/i);
    }
    // some query is the request's own child
    expect(queries.some((q) => q.parentSpanId === server.spanId)).toBe(true);
  });

  it('an MCP tool call: a span named for its tool, in the trace its _meta carried', () => {
    const tool = receiver.spans.find((s) => s.name === 'tools/call list_clientas')!;
    expect(tool).toBeDefined();
    expect(tool.traceId).toBe(MCP_TRACE_ID);
    expect(tool.parentSpanId).toBe(MCP_CALLER_SPAN);
    expect(tool.attributes['gen_ai.tool.name']).toBe('list_clientas');
    expect(receiver.spans.some((s) => s.traceId === MCP_TRACE_ID && s.parentSpanId === tool.spanId && s.attributes['db.query.text'])).toBe(
      true,
    );
    // the HTTP request that carried it has its own server span, like any request
    const post = receiver.spans.find((s) => s.kind === 2 && s.name === 'POST /mcp')!;
    expect(post.attributes['http.response.status_code']).toBe(200);
    expect(post.attributes['clinic.id']).toMatch(/^[0-9a-f-]{36}$/);
    // ... which the tool span links to
    const links = (JSON.parse(tool.text) as { links?: { traceId: string; spanId: string }[] }).links ?? [];
    expect(links).toContainEqual(expect.objectContaining({ traceId: post.traceId, spanId: post.spanId }));
  });

  it('no attribute anywhere holds the key, the search text or the clienta', () => {
    const everything = receiver.bodies.join('\n');
    expect(everything).not.toContain(server.key);
    expect(everything).not.toContain(server.key.slice(-20));
    // the search's text, as typed and as it went in the query string (no query string at all)
    expect(everything.toLowerCase()).not.toContain(search.toLowerCase());
    expect(everything).not.toContain(encodeURIComponent(search));
    expect(everything).not.toContain('q=');
    expect(everything).not.toContain(clienta.nombre);
    if (clienta.telefono) expect(everything).not.toContain(clienta.telefono);
    if (clienta.email) expect(everything).not.toContain(clienta.email);
  });

  it('a collector that takes every batch costs no log line', () => {
    expect(server.output()).not.toContain('traces: the collector');
  });

  it('the tracing modules were loaded (the control of the test below)', () => {
    const loaded = fs.readFileSync(loads, 'utf8');
    expect(loaded).toContain('/node_modules/@opentelemetry/sdk-trace/');
    expect(loaded).toContain('/node_modules/@fastify/otel/');
  });
});

describe('webhook sends', () => {
  it('a span per attempt: the receiver host, the event id and the answer; never the URL path or the body', async () => {
    const receiver = await startReceiver();
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'clinic-traces-'));
    // The path is the receiver's secret, as catch hooks make it.
    const hooks = await startWebhookReceiver('/hook/s3cr3t-catch-token');
    const env = { DATA_DIR: dir, API_KEY_PEPPER: 'traces-pepper-0123456789abcdefghijklmnopqrstuvwxyz', WEBHOOK_ALLOW_PRIVATE: 'true' };
    const rt = await openRuntime(loadConfig(env), { logTo: false });
    let server: ServerProcess | null = null;
    try {
      const clinic = await createClinic(rt.database.db, { name: 'Hooks', plan: 'premium', timezone: 'Europe/Madrid' }, Date.now());
      await rt.webhooks.create({ clinicId: clinic.id, url: hooks.url, eventTypes: null, createdBy: null });
      await seedRecords(
        rt.database,
        clinic,
        [clientaRecord('0e000001-0000-4000-8000-000000000001', 'Remedios Webhook', '+34611222333')],
        Date.now(),
      );
      server = await startServerProcess({
        key: 'none',
        env: { ...env, WEBHOOK_POLL_MS: '20', OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint, OTEL_BSP_SCHEDULE_DELAY: '50' },
      });
      await until(() => receiver.spans.some((s) => s.name === 'webhook send'), 'the webhook span exported');
      const send = receiver.spans.find((s) => s.name === 'webhook send')!;
      expect(hooks.answered.length).toBeGreaterThan(0);
      expect(send.kind).toBe(3); // client
      expect(send.attributes['server.address']).toBe('127.0.0.1');
      expect(send.attributes['http.response.status_code']).toBe(200);
      expect(hooks.answered.map((r) => r.id)).toContain(send.attributes['clinic_api.event.id']);
      const everything = receiver.bodies.join('\n');
      expect(everything).not.toContain('s3cr3t-catch-token');
      expect(everything).not.toContain('Remedios');
      expect(everything).not.toContain('611222333');
    } finally {
      await server?.kill();
      await rt.close();
      await hooks.close();
      await receiver.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);
});

const withRedis = redisAvailable('the Redis spans of test/server/traces.test.ts');

describe.runIf(withRedis)('traces on PostgreSQL, with Redis', () => {
  it('the queries through pg (statement, no values) and the rate limit through Redis (command only) are children of the request', async () => {
    const receiver = await startReceiver();
    let redis: RedisServer | null = null;
    let server: ServerProcess | null = null;
    try {
      redis = await startRedis();
      server = await startServerProcess({
        env: {
          OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${receiver.endpoint}/v1/traces`,
          OTEL_BSP_SCHEDULE_DELAY: '50',
          DATABASE_URL: await newPgDatabaseUrl(),
          API_KEY_PEPPER: 'traces-pepper-0123456789abcdefghijklmnopqrstuvwxyz',
          REDIS_URL: redis.url,
        },
      });
      const auth = { authorization: `Bearer ${server.key}` };
      const first = (await (await fetch(`${server.baseUrl}/api/v1/clientas?limit=1`, { headers: auth })).json()) as {
        clientas: { id: string; nombre: string }[];
      };
      const clienta = first.clientas[0]!;
      // The rate limit goes through Redis once the link is up (a start waits for it only so long):
      // the request is made again, each time in a trace of its own, until one went through Redis.
      let traceId = '';
      const inTrace = () => receiver.spans.filter((s) => s.traceId === traceId);
      const system = (s: Span) => s.attributes['db.system.name'] ?? s.attributes['db.system'];
      const tried: string[] = [];
      await until(
        async () => {
          const throughRedis = tried.find((id) => receiver.spans.some((s) => s.traceId === id && system(s) === 'redis'));
          if (throughRedis !== undefined) {
            traceId = throughRedis;
            return inTrace().some((s) => s.kind === 2) && inTrace().some((s) => system(s) === 'postgresql');
          }
          const id = `${TRACE_ID.slice(0, 24)}${String(tried.length).padStart(8, '0')}`;
          tried.push(id);
          const res = await fetch(`${server!.baseUrl}/api/v1/clientas/${clienta.id}`, {
            headers: { ...auth, traceparent: `00-${id}-${CALLER_SPAN}-01` },
          });
          expect(res.status).toBe(200);
          await res.arrayBuffer();
          return false;
        },
        'a request whose rate limit went through Redis, its spans exported',
        30_000,
        100,
      );
      const request = inTrace().find((s) => s.kind === 2)!;
      expect(request.name).toBe('GET /api/v1/clientas/:id');
      expect(request.attributes['url.path']).toBe(`/api/v1/clientas/${clienta.id}`);
      const queries = inTrace().filter(
        (s) =>
          typeof (s.attributes['db.query.text'] ?? s.attributes['db.statement']) === 'string' &&
          (s.attributes['db.system.name'] ?? s.attributes['db.system']) === 'postgresql',
      );
      expect(queries.length).toBeGreaterThan(0);
      for (const q of queries) {
        const text = String(q.attributes['db.query.text'] ?? q.attributes['db.statement']);
        expect(text).not.toContain(clienta.id);
      }
      expect(queries.some((q) => /\$1/.test(String(q.attributes['db.query.text'] ?? q.attributes['db.statement'])))).toBe(true);
      const redisSpans = inTrace().filter((s) => (s.attributes['db.system.name'] ?? s.attributes['db.system']) === 'redis');
      expect(redisSpans.length).toBeGreaterThan(0);
      for (const r of redisSpans) {
        expect(r.parentSpanId).toBeDefined();
        // the command's name only: no key, no argument
        const statement = r.attributes['db.query.text'] ?? r.attributes['db.statement'];
        if (statement !== undefined) expect(String(statement)).toMatch(/^[A-Za-z]+$/);
      }
      const everything = receiver.bodies.join('\n');
      expect(everything).not.toContain(server.key);
      expect(everything).not.toContain(clienta.nombre);
    } finally {
      await server?.kill();
      await redis?.stop();
      await receiver.close();
    }
  }, 120_000);
});

describe('a collector that refuses the spans', () => {
  it('is logged at once, once a minute while it lasts, and when it takes them again; never with the headers', async () => {
    const receiver = await startReceiver();
    receiver.answer.status = 401;
    const secret = 'sekret-team-key-7f3a';
    const server = await startServerProcess({
      env: {
        OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
        OTEL_EXPORTER_OTLP_HEADERS: `x-team=${secret}`,
        OTEL_BSP_SCHEDULE_DELAY: '50',
      },
    });
    const traceLines = () => server.logs().filter((l) => String(l.msg).startsWith('traces: '));
    const page = async () => {
      const res = await fetch(`${server.baseUrl}/api/v1/citas?limit=1`, { headers: { authorization: `Bearer ${server.key}` } });
      expect(res.status).toBe(200);
    };
    try {
      for (let i = 0; i < 3; i++) {
        await page();
        await until(() => receiver.answer.headers.length > i, 'an export');
      }
      // The exporter sent the headers the variable gives (the collector refuses them all the same).
      expect(receiver.answer.headers[0]!['x-team']).toBe(secret);
      await until(() => traceLines().length > 0, 'the warning');
      // Three refused batches, one warning: the next comes after a minute.
      expect(traceLines()).toEqual([
        expect.objectContaining({
          level: 40,
          msg: expect.stringContaining('traces: the collector did not take a batch of spans'),
          reason: 'HTTP 401 Unauthorized',
          collector: `${receiver.endpoint}/v1/traces`,
          failedExports: 1,
        }),
      ]);
      receiver.answer.status = 200;
      await page();
      await until(() => traceLines().length > 1, 'the recovery');
      expect(traceLines()[1]).toEqual(
        expect.objectContaining({ level: 30, msg: 'traces: the collector takes spans again', failedExports: expect.any(Number) }),
      );
      expect(traceLines()[1]!.failedExports).toBeGreaterThanOrEqual(3);
      expect(server.output()).not.toContain(secret);
      expect(server.output()).not.toContain('no such tenant');
    } finally {
      await server.kill();
      await receiver.close();
    }
  }, 120_000);
});

describe('an unreachable collector', () => {
  it('costs the requests nothing and the shutdown no more than a moment: exit 0 within SHUTDOWN_TIMEOUT_S', async () => {
    // A port that was just free: nothing listens there, so every export is refused.
    const closed = await startReceiver();
    await closed.close();
    const server = await startServerProcess({
      env: { OTEL_EXPORTER_OTLP_ENDPOINT: closed.endpoint, OTEL_BSP_SCHEDULE_DELAY: '50', SHUTDOWN_TIMEOUT_S: '3' },
    });
    try {
      for (let i = 0; i < 3; i++) {
        const res = await fetch(`${server.baseUrl}/api/v1/citas?limit=1`, { headers: { authorization: `Bearer ${server.key}` } });
        expect(res.status).toBe(200);
      }
      server.signal('SIGTERM');
      expect(await server.exited).toEqual({ code: 0, signal: null });
    } finally {
      await server.kill();
    }
  }, 120_000);
});

describe.each([
  ['without an OTLP endpoint', {}],
  ['with OTEL_SDK_DISABLED=true', { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9', OTEL_SDK_DISABLED: 'true' }],
])('%s', (_what, env: Record<string, string>) => {
  it('loads no tracing module', async () => {
    const loads = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'clinic-traces-')), 'loads.txt');
    const server = await startServerProcess({ env: { ...env, RECORD_LOADS: loads }, nodeArgs: ['--import', RECORD_LOADS] });
    try {
      const res = await fetch(`${server.baseUrl}/api/v1/citas?limit=1`, { headers: { authorization: `Bearer ${server.key}` } });
      expect(res.status).toBe(200);
      const loaded = fs.readFileSync(loads, 'utf8');
      expect(loaded).toContain('/src/server.js');
      expect(loaded).not.toMatch(/@opentelemetry|@fastify\/otel|import-in-the-middle|\/src\/telemetry\//);
    } finally {
      await server.kill();
    }
  }, 120_000);
});
