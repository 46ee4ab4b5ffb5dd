// Retries against real servers: a `clinic-api serve` process that stops and starts again on the
// same port and data (both databases), with calls made while it is down waiting with back-off
// through the refused connections; a connection reset by the peer; the budget giving up with a
// ClinicApiConnectionError; and a real 429 from the rate limit, whose Retry-After is honoured
// (the limit is in each process's memory, the same on either database).
import net from 'node:net';
import { ClinicApi, ClinicApiConnectionError, ClinicApiError, type RetryInfo } from '@clinic-api/sdk';
import { afterEach, describe, expect, it } from 'vitest';
import { dialects, newPgDatabaseUrl } from '../../../test/helpers/db.js';
import { startServerProcess, type ServerProcess } from '../../../test/helpers/server-process.js';
import { until } from '../../../test/helpers/wait.js';

const servers: ServerProcess[] = [];
afterEach(async () => {
  // the restarted ones first: they keep the first one's DATA_DIR, which its kill() removes
  for (const s of servers.splice(0).reverse()) await s.kill();
});

const quickRetries = { baseDelayMs: 20, maxDelayMs: 200, maxElapsedMs: 60_000, maxAttempts: 1_000 };

describe.each(dialects())('a server that restarts, on %s', (dialect) => {
  it('calls made while it is down wait with back-off and succeed once it is back', async () => {
    const env: Record<string, string> =
      dialect === 'postgres' ? { DATABASE_URL: await newPgDatabaseUrl(), API_KEY_PEPPER: 'sdk-restart-pepper-0123456789abcdefghij' } : {};
    const first = await startServerProcess({ env });
    servers.push(first);
    const retries: RetryInfo[] = [];
    const api = new ClinicApi({ baseUrl: first.baseUrl, apiKey: first.key, retry: quickRetries, onRetry: (i) => retries.push(i) });
    const before = await api.citas.list({ limit: 5 });
    expect(retries).toEqual([]);

    first.signal('SIGTERM');
    expect((await first.exited).code).toBe(0);
    const during = api.citas.list({ limit: 5 });
    const all: string[] = [];
    const walk = (async () => {
      for await (const c of api.clientas.all({ limit: 50 })) all.push(c.id);
    })();
    await until(() => retries.length >= 4, 'refused connections while it is down', 30_000);

    const second = await startServerProcess({ key: first.key, env: { ...env, DATA_DIR: first.dataDir, PORT: String(first.port) } });
    servers.push(second);
    expect(second.port).toBe(first.port);
    expect(await during).toEqual(before);
    await walk;
    expect(all).toHaveLength(200);
    for (const r of retries) {
      expect(r.error).toBeInstanceOf(ClinicApiConnectionError);
      expect(r.error.code).toBe('connection_error');
      expect(r.error.message).toMatch(/ECONNREFUSED/);
      expect(r.error.status).toBeUndefined();
      expect(r.delayMs).toBeLessThanOrEqual(200);
    }
    // the back-off grows: full jitter under a ceiling that doubles (20, 40, 80, then 160 and 200 ms)
    const firstCall = retries.filter((r) => r.url === retries[0]!.url && r.attempt <= 3);
    expect(firstCall.map((r) => r.attempt)).toEqual([1, 2, 3]);
    expect(firstCall.every((r, i) => r.delayMs <= 20 * 2 ** i)).toBe(true);
  }, 120_000);
});

describe('network errors and budgets', () => {
  it('a connection reset by the peer is retried; retries end at the budget with a ClinicApiConnectionError', async () => {
    const server = await startServerProcess();
    servers.push(server);
    // A proxy in front of the server that resets its first two connections.
    let accepted = 0;
    const sockets = new Set<net.Socket>();
    const proxy = net.createServer((socket) => {
      if (++accepted <= 2) return socket.resetAndDestroy();
      sockets.add(socket);
      const upstream = net.connect(server.port, '127.0.0.1');
      socket.pipe(upstream).pipe(socket);
      socket.on('error', () => upstream.destroy());
      upstream.on('error', () => socket.destroy());
    });
    await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
    try {
      const port = (proxy.address() as net.AddressInfo).port;
      const retries: RetryInfo[] = [];
      const api = new ClinicApi({
        baseUrl: `http://127.0.0.1:${port}`,
        apiKey: server.key,
        retry: quickRetries,
        onRetry: (i) => retries.push(i),
      });
      expect((await api.me()).clinica.nombre).toBe('Clínica Demo Aurora');
      expect(retries.map((r) => [r.attempt, r.error.code])).toEqual([
        [1, 'connection_error'],
        [2, 'connection_error'],
      ]);
      expect(retries[0]!.error.message).toMatch(/ECONNRESET|socket|closed/i);
    } finally {
      for (const s of sockets) s.destroy();
      await new Promise((r) => proxy.close(r));
    }

    // Nothing listening: three attempts, two waits, then the last error.
    const closed = net.createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const deadPort = (closed.address() as net.AddressInfo).port;
    await new Promise((r) => closed.close(r));
    const retries: RetryInfo[] = [];
    const api = new ClinicApi({
      baseUrl: `http://127.0.0.1:${deadPort}`,
      apiKey: server.key,
      retry: { maxAttempts: 3, baseDelayMs: 10 },
      onRetry: (i) => retries.push(i),
    });
    const err = await api.me().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ClinicApiConnectionError);
    expect(err).toMatchObject({ code: 'connection_error', method: 'GET', url: `http://127.0.0.1:${deadPort}/api/v1/me` });
    expect((err as Error).message).toMatch(/^GET http:\/\/127\.0\.0\.1:\d+\/api\/v1\/me: .*ECONNREFUSED/);
    expect(retries.map((r) => r.attempt)).toEqual([1, 2]);
    // retry: false: one attempt
    const once: RetryInfo[] = [];
    await expect(
      new ClinicApi({ baseUrl: `http://127.0.0.1:${deadPort}`, apiKey: server.key, retry: false, onRetry: (i) => once.push(i) }).me(),
    ).rejects.toBeInstanceOf(ClinicApiConnectionError);
    expect(once).toEqual([]);
  }, 60_000);

  it("a 429 of the rate limit waits the Retry-After the server sends, then succeeds; one that does not fit the budget is the caller's", async () => {
    const server = await startServerProcess({ env: { RATE_LIMIT_RPS: '1', RATE_LIMIT_BURST: '1' } });
    servers.push(server);
    const retries: RetryInfo[] = [];
    const api = new ClinicApi({ baseUrl: server.baseUrl, apiKey: server.key, onRetry: (i) => retries.push(i) });
    // Three at once with a burst of 1: the others get 429 and wait as told.
    const answers = await Promise.all([api.me(), api.me(), api.me()]);
    for (const me of answers) expect(me.rate_limit).toEqual({ rps: 1, burst: 1 });
    expect(retries.length).toBeGreaterThanOrEqual(1);
    for (const r of retries) {
      expect(r.error).toMatchObject({ status: 429, code: 'too_many_requests' });
      expect(r.error.retryAfter).toBeGreaterThanOrEqual(1);
      expect(r.error.requestId).toBeTruthy();
      // as asked, with at most 10 % on top
      expect(r.delayMs).toBeGreaterThanOrEqual(r.error.retryAfter! * 1000);
      expect(r.delayMs).toBeLessThanOrEqual(r.error.retryAfter! * 1100);
    }

    // A budget shorter than the Retry-After: no wait, the 429 comes back at once.
    const impatient = new ClinicApi({ baseUrl: server.baseUrl, apiKey: server.key, retry: { maxElapsedMs: 500 } });
    const settled = await Promise.allSettled([impatient.me(), impatient.me(), impatient.me()]);
    const refused = settled.filter((s) => s.status === 'rejected').map((s) => (s as PromiseRejectedResult).reason as unknown);
    expect(refused.length).toBeGreaterThanOrEqual(1);
    for (const err of refused) {
      expect(err).toBeInstanceOf(ClinicApiError);
      expect(err).toMatchObject({ status: 429, code: 'too_many_requests' });
      expect((err as ClinicApiError).retryAfter).toBeGreaterThanOrEqual(1);
    }
  }, 60_000);
});
