import { existsSync } from 'node:fs';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDatabase } from '../../tools/postgres-database.js';
import { startEmbeddedPostgres, type PgServer } from '../../tools/postgres-server.js';
import { isAlive } from '../../tools/watchdog.js';
import { until } from '../helpers/wait.js';
import { killWorker, STATES } from './killed-worker.js';

async function withClient<T>(url: string, fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/** The cluster's temp dir and postmaster pid, read through SQL. */
async function serverFiles(url: string): Promise<{ root: string; postmasterPid: number }> {
  const dataDir = await withClient(
    url,
    async (c) => (await c.query<{ data_directory: string }>('show data_directory')).rows[0]!.data_directory,
  );
  const pidFile = await fs.readFile(path.join(dataDir, 'postmaster.pid'), 'utf8');
  return { root: path.dirname(dataDir), postmasterPid: Number.parseInt(pidFile, 10) };
}

describe('startEmbeddedPostgres', () => {
  let server: PgServer;
  const logLines: string[] = [];

  beforeAll(async () => {
    server = await startEmbeddedPostgres({ log: (line) => logLines.push(line) });
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('serves PostgreSQL 17 on 127.0.0.1 with a password URL and forwards the server log', async () => {
    const url = new URL(server.url);
    expect(url.hostname).toBe('127.0.0.1');
    expect(url.username).toBe('postgres');
    expect(url.password).not.toBe('');
    const version = await withClient(server.url, async (c) => (await c.query<{ version: string }>('select version()')).rows[0]!.version);
    expect(version).toMatch(/^PostgreSQL 17\./);
    expect(logLines.some((l) => l.includes('database system is ready to accept connections'))).toBe(true);
  });

  it('runs with the test settings: UTC, UTF8 with a UTF-8 ctype, durability off', async () => {
    const row = await withClient(
      server.url,
      async (c) =>
        (
          await c.query(`select current_setting('TimeZone') tz, current_setting('fsync') fsync,
            current_setting('synchronous_commit') sc, current_setting('full_page_writes') fpw,
            pg_encoding_to_char(encoding) enc, datctype, upper('josé') up
          from pg_database where datname = current_database()`)
        ).rows[0],
    );
    expect(row).toEqual({ tz: 'UTC', fsync: 'off', sc: 'off', fpw: 'off', enc: 'UTF8', datctype: 'C.UTF-8', up: 'JOSÉ' });
  });

  it('createDatabase gives a fresh database with pg_trgm and unaccent available', async () => {
    const dbUrl = await createDatabase(server.url, 'pgserver_test_a');
    expect(new URL(dbUrl).pathname).toBe('/pgserver_test_a');
    await withClient(dbUrl, async (c) => {
      expect((await c.query('select current_database() db')).rows[0].db).toBe('pgserver_test_a');
      await c.query('create extension pg_trgm');
      await c.query('create extension unaccent');
      const r = await c.query(`select similarity('Müller', 'Muller') > 0.3 is_similar, unaccent('José Müller') plain`);
      expect(r.rows[0]).toEqual({ is_similar: true, plain: 'Jose Muller' });
      await c.query('create table leftover (id int)');
    });

    // Same name again: dropped and recreated, even with a connection still open to it.
    const holder = new pg.Client({ connectionString: dbUrl });
    holder.on('error', () => {});
    await holder.connect();
    const again = await createDatabase(server.url, 'pgserver_test_a');
    await holder.end().catch(() => {});
    const tables = await withClient(
      again,
      async (c) => (await c.query(`select count(*)::int n from pg_tables where schemaname = 'public'`)).rows[0].n,
    );
    expect(tables).toBe(0);
  });

  it('createDatabase rejects names it cannot use verbatim', async () => {
    await expect(createDatabase(server.url, 'bad name')).rejects.toThrow(/invalid database name/);
    await expect(createDatabase(server.url, 'x'.repeat(64))).rejects.toThrow(/invalid database name/);
  });
});

describe('stop()', () => {
  it('shuts the server down, removes its temp dir and can be called twice', async () => {
    const t0 = performance.now();
    const server = await startEmbeddedPostgres();
    const started = performance.now();
    const { root, postmasterPid } = await serverFiles(server.url);
    expect(root.startsWith(os.tmpdir())).toBe(true);
    expect(isAlive(postmasterPid)).toBe(true);

    const t1 = performance.now();
    await Promise.all([server.stop(), server.stop()]);
    const stopped = performance.now();
    await server.stop();

    expect(existsSync(root)).toBe(false);
    expect(isAlive(postmasterPid)).toBe(false);
    await expect(withClient(server.url, async () => {})).rejects.toThrow(/ECONNREFUSED/);
    // Shown with --reporter=verbose; typically ~0.7s start, <0.1s stop.
    console.info(`embedded postgres: start ${Math.round(started - t0)} ms, stop ${Math.round(stopped - t1)} ms`);
  });

  it('two servers at once get their own port and directory', async () => {
    const [a, b] = await Promise.all([startEmbeddedPostgres(), startEmbeddedPostgres()]);
    try {
      expect(new URL(a.url).port).not.toBe(new URL(b.url).port);
      const [fa, fb] = await Promise.all([serverFiles(a.url), serverFiles(b.url)]);
      expect(fa.root).not.toBe(fb.root);
    } finally {
      await Promise.all([a.stop(), b.stop()]);
    }
  });

  it.each(STATES)('a test process killed with SIGKILL leaves neither its server running nor its files (%s)', async (_label, frozen) => {
    const worker = { tool: 'postgres-server.ts', start: 'startEmbeddedPostgres', pid: 's.pid', frozen };
    const { postmasterPid, root } = await killWorker(worker, async (postmasterPid) => {
      // The server runs in its data dir, inside the temp dir (a frozen one cannot be asked through SQL).
      const root = path.dirname(await fs.readlink(`/proc/${postmasterPid}/cwd`));
      expect(path.basename(root)).toMatch(/^clinic-api-pg-/);
      return { postmasterPid, root };
    });
    await until(() => !isAlive(postmasterPid), 'the postmaster to exit', 10_000, 50);
    // Nobody called stop(): the watchdog deleted the cluster's files once the server had gone.
    await until(() => !existsSync(root), `the watchdog to delete ${root}`, 10_000, 50);
  });
});

describe('fault helpers: shutdown(), start(), freeze(), thaw()', () => {
  let server: PgServer;
  beforeAll(async () => {
    server = await startEmbeddedPostgres();
    await withClient(server.url, (c) => c.query('create table kept (n int); insert into kept values (42)'));
  });
  afterAll(async () => {
    await server?.stop();
  });

  const kept = () => withClient(server.url, async (c) => (await c.query<{ n: number }>('select n from kept')).rows[0]!.n);

  it('a fast shutdown ends open connections with 57P01, refuses new ones, and start() brings the same data back on the same port', async () => {
    const open = new pg.Client({ connectionString: server.url });
    const ended = new Promise<{ code?: string }>((resolve) => open.on('error', (err) => resolve(err as { code?: string })));
    await open.connect();
    const pid = server.pid;
    expect(pid && isAlive(pid)).toBe(true);

    await server.shutdown('fast');
    expect((await ended).code).toBe('57P01');
    expect(server.pid).toBeUndefined();
    expect(isAlive(pid!)).toBe(false);
    await expect(withClient(server.url, async () => {})).rejects.toThrow(/ECONNREFUSED/);

    await server.start();
    expect(server.pid).not.toBe(pid);
    expect(await kept()).toBe(42);
  });

  it('an immediate shutdown is a crash the next start() recovers from', async () => {
    await server.shutdown('immediate');
    await expect(withClient(server.url, async () => {})).rejects.toThrow(/ECONNREFUSED/);
    await server.start();
    expect(await kept()).toBe(42);
  });

  it('freeze() leaves connections open with nothing answering until thaw()', async () => {
    const client = new pg.Client({ connectionString: server.url, query_timeout: 300 });
    client.on('error', () => {});
    await client.connect();
    try {
      server.freeze();
      await expect(client.query('select 1')).rejects.toThrow(/Query read timeout/);
      // A new connection is not refused (the kernel completes the handshake) but never answered.
      const fresh = new pg.Client({ connectionString: server.url, connectionTimeoutMillis: 300 });
      fresh.on('error', () => {});
      await expect(fresh.connect()).rejects.toThrow(/timeout/i);
      server.thaw();
      expect(await kept()).toBe(42);
    } finally {
      server.thaw();
      await client.end().catch(() => {});
    }
  });

  it('stop() works on a frozen server', async () => {
    const other = await startEmbeddedPostgres();
    const pid = other.pid!;
    other.freeze();
    await other.stop();
    expect(isAlive(pid)).toBe(false);
  });
});
