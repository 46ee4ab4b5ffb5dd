// A graceful shutdown of a real server process (SIGTERM and SIGINT), with 80 requests in flight
// over keep-alive and closing connections: /readyz turns 503 at once, new connections are
// refused, idle keep-alive connections are closed, every request in flight is answered in full
// with `Connection: close`, and the process exits 0 (close-with-grace exits 1 past
// SHUTDOWN_TIMEOUT_S). The requests are held in flight by a lock on the table they read, so
// "in flight" is a fact the server's own metrics confirm, not a guess about timing.
import http from 'node:http';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { dialects, newPgDatabaseUrl } from '../helpers/db.js';
import { connect, parseResponse, within } from '../helpers/raw-http.js';
import { startServerProcess, type ServerProcess } from '../helpers/server-process.js';
import { pause, until } from '../helpers/wait.js';

const METRICS_TOKEN = 'shutdown-test-metrics-token-0123456789abcdef';
const IN_FLIGHT = 80;

interface Answer {
  status: number;
  connection: string | undefined;
  body: string;
  error: string | null;
}

function get(url: string, opts: { agent?: http.Agent; headers?: Record<string, string> }): Promise<Answer> {
  return new Promise((resolve) => {
    const req = http.get(url, { agent: opts.agent ?? false, headers: opts.headers }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => {
        body += c;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, connection: res.headers.connection, body, error: null }));
      res.on('error', (err) =>
        resolve({
          status: res.statusCode ?? 0,
          connection: res.headers.connection,
          body,
          error: (err as NodeJS.ErrnoException).code ?? err.message,
        }),
      );
    });
    req.on('error', (err) =>
      resolve({ status: 0, connection: undefined, body: '', error: (err as NodeJS.ErrnoException).code ?? err.message }),
    );
  });
}

async function inFlight(server: ServerProcess): Promise<number> {
  const res = await get(`${server.baseUrl}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
  // This scrape is a request in flight too.
  return Number(/^http_requests_in_flight (\d+)/m.exec(res.body)?.[1] ?? NaN) - 1;
}

let running: ServerProcess | null = null;
afterEach(async () => {
  await running?.kill();
  running = null;
});

describe.skipIf(!dialects().includes('postgres'))('graceful shutdown of a real server process', () => {
  it.each(['SIGTERM', 'SIGINT'] as const)(
    '%s: every request in flight is answered, nothing new is accepted, exit code 0',
    async (signal) => {
      const dbUrl = await newPgDatabaseUrl();
      const server = await startServerProcess({
        env: {
          DATABASE_URL: dbUrl,
          API_KEY_PEPPER: 'shutdown-pepper-0123456789abcdefghijklmnopqrstuvwxyz',
          DB_POOL_MAX: '10',
          // The requests wait for the lock, in PostgreSQL or for a pooled connection: long limits.
          DB_STATEMENT_TIMEOUT_MS: '20000',
          DB_CONNECT_TIMEOUT_MS: '20000',
          SOCKET_TIMEOUT_MS: '60000',
          KEEP_ALIVE_TIMEOUT_MS: '60000',
          SHUTDOWN_TIMEOUT_S: '30',
          METRICS_TOKEN,
          RATE_LIMIT_RPS: '100000',
          RATE_LIMIT_BURST: '1000000',
        },
      });
      running = server;
      const auth = { authorization: `Bearer ${server.key}` };
      const api = `${server.baseUrl}/api/v1/citas?limit=5`;
      const keepAlive = new http.Agent({ keepAlive: true, maxSockets: IN_FLIGHT / 2 });

      // Keep-alive connections that have served a request already (reused, as a pooling client's are).
      const warm = await Promise.all(Array.from({ length: IN_FLIGHT / 2 }, () => get(api, { agent: keepAlive, headers: auth })));
      expect(warm.every((a) => a.status === 200)).toBe(true);
      // Idle keep-alive connections, a connection that has sent nothing yet, and one halfway through its request.
      const idle = await Promise.all(
        Array.from({ length: 5 }, async () => {
          const c = await connect(server.port);
          await c.write('GET /livez HTTP/1.1\r\nHost: x\r\n\r\n');
          return c;
        }),
      );
      const silent = await connect(server.port);
      const late = await connect(server.port);
      const halfway = await connect(server.port);
      await halfway.write('GET /readyz HTTP/1.1\r\nHost: x\r\n');
      await until(() => idle.every((c) => parseResponse(c.received()) !== null || c.isClosed()), "the idle connections' answers");
      expect(idle.every((c) => parseResponse(c.received())?.status === 200)).toBe(true);

      // Hold the requests: another session locks the table they read.
      const locker = new pg.Client({ connectionString: dbUrl });
      await locker.connect();
      await locker.query('begin');
      await locker.query('lock table citas in access exclusive mode');
      // Each asks for a page of its own: the page asked for above is kept by the page cache and
      // would be answered without reading citas.
      const page = (i: number) => `${api}&offset=${i + 1}`;
      const answers = Promise.all([
        ...Array.from({ length: IN_FLIGHT / 2 }, (_, i) => get(page(i), { agent: keepAlive, headers: auth })),
        ...Array.from({ length: IN_FLIGHT / 2 }, (_, i) => get(page(IN_FLIGHT / 2 + i), { headers: { ...auth, connection: 'close' } })),
      ]);
      await until(async () => (await inFlight(server)) >= IN_FLIGHT, `${IN_FLIGHT} requests in flight`, 20_000, 100);
      expect(await inFlight(server)).toBe(IN_FLIGHT);

      server.signal(signal);
      // A connection made before the signal that sends its request just after it: answered, not reset.
      await late.write('GET /readyz HTTP/1.1\r\nHost: x\r\n\r\n');

      // /readyz at once, on the connection that was halfway through its request.
      await halfway.write('\r\n');
      expect(await within(halfway.closed, 5_000)).toBe(true);
      const ready = parseResponse(halfway.received());
      expect([ready?.status, ready?.headers['connection'], ready?.body]).toEqual([503, 'close', '{"status":"shutting_down"}']);
      expect(await within(late.closed, 5_000)).toBe(true);
      // 200 if it arrived before the signal was handled, else 503; in full either way.
      expect([200, 503]).toContain(parseResponse(late.received())?.status);

      // New connections are refused (until the signal is handled they may still be accepted, and
      // answered). One connection may race the listener's close: the kernel completed its handshake
      // after the last accept, and closing the listener resets it at once. That is the only reset
      // allowed, and the very next connection must then be refused: a reset while the listener
      // stays open (the drain's old fault) is followed by another answer or reset instead.
      let refused = false;
      let resetJustBefore = false;
      for (let i = 0; i < 50 && !refused; i++) {
        const a = await get(`${server.baseUrl}/livez`, { headers: { connection: 'close' } });
        if (a.error === 'ECONNREFUSED') refused = true;
        else if (a.error === 'ECONNRESET' && !resetJustBefore) resetJustBefore = true;
        else expect(a.error, 'a new connection was reset instead of refused or answered, and not by the listener closing').toBeNull();
        if (!refused && resetJustBefore && a.error !== 'ECONNRESET') {
          expect.fail(`a connection was reset while the listener stayed open (the next one got ${a.error ?? 'an answer'})`);
        }
        await pause(20); // the pace of the attempts
      }
      expect(refused).toBe(true);

      // Idle keep-alive connections are closed; the silent one after its grace.
      for (const c of [...idle, silent]) expect(await within(c.closed, 5_000)).toBe(true);

      // Still draining: the answers are held by the lock. Then let them go.
      expect(server.alive()).toBe(true);
      await locker.query('rollback');
      await locker.end();

      const all = await answers;
      const failed = all.filter((a) => a.status !== 200 || a.error !== null);
      expect(failed.slice(0, 3), `${failed.length} of ${IN_FLIGHT} requests in flight failed`).toEqual([]);
      expect(all.every((a) => a.connection === 'close')).toBe(true);
      expect(all.every((a) => Array.isArray((JSON.parse(a.body) as { citas: unknown }).citas))).toBe(true);

      const exit = await server.exited;
      expect(exit, server.output().slice(-2000)).toEqual({ code: 0, signal: null });
      const messages = server.logs().map((l) => l.msg);
      expect(messages).toContain('shutting down: draining the requests in flight');
      expect(messages).toContain('shut down');
      keepAlive.destroy();
    },
    90_000,
  );
});
