// Slow, greedy and broken clients against a real server process, over raw sockets: requests
// Node's parser refuses get the API's error shape with a request id; slow headers, slow bodies,
// idle keep-alive connections and responses nobody reads are cut off; the connections of one
// address are capped. (Whether normal clients stay fast meanwhile is a measurement, in
// docs/operations.md, never timed here.)
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_PIPELINED_REQUESTS } from '../../src/http/plugins/connections.js';
import { connect, exchange, parseResponse, within, type ParsedResponse } from '../helpers/raw-http.js';
import { startServerProcess, type ServerProcess } from '../helpers/server-process.js';
import { pause, until, untilRead } from '../helpers/wait.js';

const HEADERS_TIMEOUT_MS = 1_000;
const REQUEST_TIMEOUT_MS = 2_000;
const KEEP_ALIVE_TIMEOUT_MS = 1_000;
const SOCKET_TIMEOUT_MS = 2_500;
const MAX_CONNECTIONS = 5;
const MAX_HEADER_BYTES = 4_096;
const METRICS_TOKEN = 'hostile-clients-metrics-token-0123456789';
/** Generous: each limit above is a second or two; a cut-off must come well before this. */
const CUT_OFF_WITHIN_MS = 10_000;
const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** The API's one error shape, with its request id also in X-Request-Id, and the connection closing. */
function expectErrorShape(res: ParsedResponse | null, status: number, code: string) {
  expect(res, 'no HTTP response').not.toBeNull();
  expect(res!.status).toBe(status);
  expect(res!.headers['content-type']).toBe('application/json; charset=utf-8');
  expect(res!.headers['cache-control']).toBe('no-store');
  expect(res!.headers['connection']).toBe('close');
  const body = JSON.parse(res!.body) as { error: { code: string; message: string; request_id: string } };
  expect(Object.keys(body.error).sort()).toEqual(['code', 'message', 'request_id']);
  expect(body.error.code).toBe(code);
  expect(body.error.request_id).toMatch(UUID_RE);
  expect(res!.headers['x-request-id']).toBe(body.error.request_id);
  return body.error;
}

describe('hostile clients against a real server process', () => {
  let server: ServerProcess;
  let port: number;

  /** The value of one series on the server's /metrics (0 when absent). */
  async function metric(series: string): Promise<number> {
    const res = await fetch(`${server.baseUrl}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
    expect(res.status).toBe(200);
    const text = await res.text();
    const escaped = series.replace(/[{}"]/g, (ch) => `\\${ch}`);
    return Number(new RegExp(`^${escaped} (\\d+)`, 'm').exec(text)?.[1] ?? 0);
  }

  beforeAll(async () => {
    server = await startServerProcess({
      env: {
        HEADERS_TIMEOUT_MS: String(HEADERS_TIMEOUT_MS),
        REQUEST_TIMEOUT_MS: String(REQUEST_TIMEOUT_MS),
        KEEP_ALIVE_TIMEOUT_MS: String(KEEP_ALIVE_TIMEOUT_MS),
        SOCKET_TIMEOUT_MS: String(SOCKET_TIMEOUT_MS),
        DB_STATEMENT_TIMEOUT_MS: '1000',
        DB_CONNECT_TIMEOUT_MS: '500',
        MAX_CONNECTIONS_PER_ADDRESS: String(MAX_CONNECTIONS),
        MAX_HEADER_BYTES: String(MAX_HEADER_BYTES),
        METRICS_TOKEN,
        RATE_LIMIT_RPS: '100000',
        RATE_LIMIT_BURST: '1000000',
      },
    });
    port = server.port;
  });
  afterAll(async () => {
    await server?.kill();
  });

  describe('requests the HTTP parser refuses are answered in the error shape', () => {
    it.each([
      ['a lowercase method', 'get /api/v1/citas HTTP/1.1\r\nHost: x\r\n\r\n'],
      ['a control byte in a header value', 'GET /api/v1/citas HTTP/1.1\r\nHost: x\r\nX-Note: a\x01b\r\n\r\n'],
      ['NUL in a header value', 'GET /api/v1/citas HTTP/1.1\r\nHost: x\r\nX-Note: a\x00b\r\n\r\n'],
      ['NUL in a header name', 'GET /api/v1/citas HTTP/1.1\r\nHost: x\r\nX-\x00Note: a\r\n\r\n'],
      ['a space in a header name', 'GET /api/v1/citas HTTP/1.1\r\nHost: x\r\nX Note: a\r\n\r\n'],
      ['a header without a colon', 'GET /api/v1/citas HTTP/1.1\r\nHost: x\r\nAuthorization Bearer svc_x\r\n\r\n'],
      ['an unknown HTTP version', 'GET /api/v1/citas HTTP/7.1\r\nHost: x\r\n\r\n'],
      ['a Content-Length that is not a number', 'GET /api/v1/citas HTTP/1.1\r\nHost: x\r\nContent-Length: ten\r\n\r\n'],
      [
        'Content-Length and Transfer-Encoding together',
        'POST /dashboard/sign-in HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n',
      ],
      ['bytes that are not HTTP at all', '\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03'],
    ])('%s: 400 malformed_request', async (_label, request) => {
      const { response } = await exchange(port, Buffer.from(request, 'latin1'));
      const err = expectErrorShape(response, 400, 'malformed_request');
      expect(err.message).toMatch(/not valid HTTP\/1\.1/);
    });

    it('headers over MAX_HEADER_BYTES: 431 headers_too_large, naming the limit', async () => {
      const { response } = await exchange(port, `GET /api/v1/citas HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(MAX_HEADER_BYTES)}\r\n\r\n`);
      const err = expectErrorShape(response, 431, 'headers_too_large');
      expect(err.message).toContain(String(MAX_HEADER_BYTES));
    });
  });

  describe('slow clients are cut off', () => {
    it('headers sent a byte at a time: 408 request_timeout, then the connection closes', async () => {
      const c = await connect(port);
      await c.write('GET /api/v1/citas HTTP/1.1\r\nHost: x\r\n');
      // Would take a minute to finish; the server must not wait for it.
      const drip = (async () => {
        for (const ch of 'X-Slow: '.concat('a'.repeat(300))) {
          if (c.isClosed()) return;
          await c.write(ch);
          await pause(200); // the slow client is the point: a byte every 200 ms
        }
      })();
      expect(await within(c.closed, CUT_OFF_WITHIN_MS)).toBe(true);
      await drip;
      const err = expectErrorShape(parseResponse(c.received()), 408, 'request_timeout');
      expect(err.message).toContain(String(HEADERS_TIMEOUT_MS));
    });

    it('a connection that never sends anything is closed', async () => {
      const c = await connect(port);
      expect(await within(c.closed, CUT_OFF_WITHIN_MS)).toBe(true);
    });

    it('a body sent a byte at a time is cut off', async () => {
      const c = await connect(port);
      await c.write(
        'POST /dashboard/sign-in HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 200\r\n\r\n',
      );
      const drip = (async () => {
        for (let i = 0; i < 200 && !c.isClosed(); i++) {
          await c.write('a');
          await pause(200); // the slow client is the point: a byte every 200 ms
        }
      })();
      expect(await within(c.closed, CUT_OFF_WITHIN_MS)).toBe(true);
      await drip;
      const res = parseResponse(c.received());
      // Refused in the error shape when the server could still answer; closed in any case.
      if (res) expect(res.status).toBe(408);
    });

    it('an idle keep-alive connection is closed after KEEP_ALIVE_TIMEOUT_MS', async () => {
      const c = await connect(port);
      await c.write('GET /livez HTTP/1.1\r\nHost: x\r\n\r\n');
      await until(() => parseResponse(c.received()) !== null || c.isClosed(), 'the answer to /livez');
      expect(parseResponse(c.received())?.status).toBe(200);
      expect(await within(c.closed, CUT_OFF_WITHIN_MS)).toBe(true);
    });

    it('a client that does not read its responses is cut off after SOCKET_TIMEOUT_MS; the rest is never sent', async () => {
      const path = '/api/v1/citas?desde=2000-01-01&hasta=2099-12-31&limit=500';
      const one = (await (await fetch(server.baseUrl + path, { headers: { authorization: `Bearer ${server.key}` } })).arrayBuffer())
        .byteLength;
      expect(one).toBeGreaterThan(100_000);
      const stalledBefore = await metric('http_connections_closed_total{reason="stalled"}');
      const c = await connect(port);
      c.socket.pause(); // reads nothing, ever
      const request = `GET ${path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${server.key}\r\n\r\n`;
      // Batches of requests (never more waiting than the pipelining cap allows) until the socket
      // buffers are full and the answers cannot leave; then nothing moves.
      const batch = MAX_PIPELINED_REQUESTS / 2;
      for (let i = 0; i < 4 && !c.isClosed(); i++) {
        await c.write(request.repeat(batch));
        // Time for the server to take the batch in and write what the buffers hold: how much they
        // hold is the kernel's to say, so no condition marks the moment they are full.
        await pause(400);
      }
      // Node counts a write the kernel still takes a little of, now and then, as activity: the
      // cut-off comes SOCKET_TIMEOUT_MS after the last byte left, which the server's metrics tell.
      await until(
        async () => (await metric('http_connections_closed_total{reason="stalled"}')) !== stalledBefore,
        'the stalled connection to be cut off',
        40_000,
        250,
      );
      c.socket.resume();
      expect(await within(c.closed, CUT_OFF_WITHIN_MS)).toBe(true);
      expect(await metric('http_connections_closed_total{reason="stalled"}')).toBe(stalledBefore + 1);
      // Cut off: what the socket buffers held arrived, not the answers still waiting to be sent.
      expect(c.received().length).toBeLessThan(one * batch * 4);
    }, 60_000);

    it(`a connection with more than ${MAX_PIPELINED_REQUESTS} requests waiting is closed`, async () => {
      const before = await metric('http_connections_closed_total{reason="pipelining"}');
      const c = await connect(port);
      await c.write('GET /livez HTTP/1.1\r\nHost: x\r\n\r\n'.repeat(200));
      expect(await within(c.closed, CUT_OFF_WITHIN_MS)).toBe(true);
      const answered = c.received().toString('latin1').split('HTTP/1.1 200').length - 1;
      expect(answered).toBeLessThan(200);
      expect(await metric('http_connections_closed_total{reason="pipelining"}')).toBe(before + 1);
    });
  });

  it(`refuses connection number ${MAX_CONNECTIONS + 1} from one address, not from another, and again once one closes`, async () => {
    const held = await Promise.all(Array.from({ length: MAX_CONNECTIONS }, () => connect(port)));
    try {
      const extra = await connect(port);
      expect(await within(extra.closed, 2_000)).toBe(true);
      expect(extra.received().length).toBe(0);

      const other = await exchange(port, 'GET /livez HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n', { localAddress: '127.0.0.2' });
      expect(other.response?.status).toBe(200);

      held[0]!.destroy();
      await held[0]!.closed;
      // The server counts the close when it sees it: until then a new connection may still be refused.
      const again = await untilRead(
        'a connection from that address to be served again',
        () => exchange(port, 'GET /livez HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n'),
        (r) => r.response !== null,
      );
      expect(again.response?.status).toBe(200);
    } finally {
      for (const c of held) c.destroy();
    }
  });

  it('counts what it refused in the metrics', async () => {
    expect(await metric('http_client_errors_total{reason="parse"}')).toBeGreaterThanOrEqual(10);
    expect(await metric('http_client_errors_total{reason="header_overflow"}')).toBeGreaterThanOrEqual(1);
    expect(await metric('http_client_errors_total{reason="timeout"}')).toBeGreaterThanOrEqual(1);
    expect(await metric('http_connections_closed_total{reason="per_address"}')).toBeGreaterThanOrEqual(1);
    expect(await metric('http_connections_closed_total{reason="pipelining"}')).toBeGreaterThanOrEqual(1);
    expect(server.alive()).toBe(true);
  });
});
