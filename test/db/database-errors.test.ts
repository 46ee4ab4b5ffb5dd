// A database that fails, times out or is gone is answered as 500 database_error with
// Retry-After and nothing of the cause in the body (docs/api.md, "Errors"), on both databases.
import net from 'node:net';
import { sql } from 'kysely';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { databaseErrorKind, isDatabaseError, openDatabase } from '../../src/db/connect.js';
import { DATABASE_RETRY_AFTER_SECONDS } from '../../src/errors.js';
import { bearer } from '../helpers/app.js';
import { dialects } from '../helpers/db.js';
import { appOn, newPgDatabaseUrl, ownTarget, type OwnApp } from './helpers.js';

const PATH = '/api/v1/citas?desde=2026-03-01&hasta=2026-03-31';

async function get(t: OwnApp, url = PATH) {
  return t.app.inject({ method: 'GET', url, headers: bearer(t.key) });
}

function expectDatabaseError(res: Awaited<ReturnType<typeof get>>) {
  expect(res.statusCode, res.body).toBe(500);
  expect(res.headers['retry-after']).toBe(String(DATABASE_RETRY_AFTER_SECONDS));
  expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
  // The list set its page's tag before the page failed: the error must not carry it.
  expect(res.headers.etag).toBeUndefined();
  const body = res.json();
  expect(body).toEqual({
    error: { code: 'database_error', message: 'The database is unavailable; retry in a few seconds', request_id: expect.any(String) },
  });
  // Nothing of the cause: no SQL, table names, driver or server messages.
  expect(res.body).not.toMatch(/citas_|select|timeout|statement|ECONN|sqlite|postgres|lock/i);
}

/** A TCP port with nothing listening on it. */
async function closedPort(): Promise<number> {
  const srv = net.createServer();
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
  const port = (srv.address() as net.AddressInfo).port;
  await new Promise<void>((resolve) => srv.close(() => resolve()));
  return port;
}

let open: OwnApp[] = [];
afterEach(async () => {
  for (const t of open) await t.close();
  open = [];
});

describe.skipIf(!dialects().includes('postgres'))('database failures on postgres', () => {
  it('a statement that outlives DB_STATEMENT_TIMEOUT_MS is cancelled and answered as database_error; the next request works', async () => {
    const url = await newPgDatabaseUrl();
    const t = await appOn({ kind: 'postgres', url, poolMax: 2, statementTimeoutMs: 300 });
    open.push(t);
    expect((await get(t)).statusCode).toBe(200); // the key is now cached: the next failure is the listing's

    // Another session holds citas locked, so the listing waits until its statement timeout.
    const locker = new pg.Client({ connectionString: url });
    await locker.connect();
    try {
      await locker.query('begin');
      await locker.query('lock table citas in access exclusive mode');
      // A page not asked for yet: the page asked for above is kept by the page cache under a tag
      // that is still current, and is answered without reading citas.
      const unseen = `${PATH}&limit=7`;
      const started = Date.now();
      expectDatabaseError(await get(t, unseen));
      expect(Date.now() - started).toBeLessThan(3_000);
      await locker.query('rollback');
      expect((await get(t, unseen)).statusCode).toBe(200);
    } finally {
      await locker.end();
    }
  });

  it('the pool sets statement_timeout on its connections (pg_sleep past it fails as a database error)', async () => {
    const url = await newPgDatabaseUrl();
    const database = await openDatabase({ kind: 'postgres', url, poolMax: 1, statementTimeoutMs: 200 });
    try {
      const err = await sql`select pg_sleep(2)`.execute(database.db).then(
        () => null,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(Error);
      expect((err as { code?: string }).code).toBe('57014'); // query_canceled
      expect(isDatabaseError(err)).toBe(true);
      expect((await sql<{ one: number }>`select 1 as one`.execute(database.db)).rows).toEqual([{ one: 1 }]);
    } finally {
      await database.close();
    }
  });

  it('a database that disappears under a running app is answered as database_error', async () => {
    const url = await newPgDatabaseUrl();
    const t = await appOn({ kind: 'postgres', url, poolMax: 2, statementTimeoutMs: 5_000 });
    open.push(t);
    expect((await get(t)).statusCode).toBe(200);
    const admin = new pg.Client({ connectionString: url.replace(/\/[^/]*$/, '/postgres') });
    await admin.connect();
    try {
      await admin.query(`drop database ${admin.escapeIdentifier(new URL(url).pathname.slice(1))} with (force)`);
    } finally {
      await admin.end();
    }
    expectDatabaseError(await get(t));
    expectDatabaseError(await get(t, '/api/v1/clientas?q=mar'));
  });

  it('a connection whose server stopped answering is dropped, not reused: the next query gets a fresh one', async () => {
    const url = await newPgDatabaseUrl();
    // One connection, so that the next query would have to use the same one if it were kept.
    const database = await openDatabase({ kind: 'postgres', url, poolMax: 1, statementTimeoutMs: 300, connectTimeoutMs: 2_000 });
    const backend = async () => (await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(database.db)).rows[0]!.pid;
    const stuck = await backend();
    // That connection's server process stops (as on a hung host); the server itself still answers.
    process.kill(stuck, 'SIGSTOP');
    try {
      const err = await sql`select 1`.execute(database.db).then(
        () => null,
        (e: unknown) => e,
      );
      expect((err as Error).message).toMatch(/Query read timeout/);
      expect(isDatabaseError(err)).toBe(true);
      // Kept, the connection would still have the unanswered statement on the wire, and every
      // query after it would wait behind it and time out as well.
      const fresh = await backend();
      expect(fresh).not.toBe(stuck);
    } finally {
      process.kill(stuck, 'SIGCONT');
      await database.close();
    }
  });

  it('waits at most connectTimeoutMs for a server that accepts connections and never answers', async () => {
    const silent = net.createServer(() => {}); // accepts, never speaks
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const url = `postgres://u:p@127.0.0.1:${(silent.address() as net.AddressInfo).port}/none`;
    const database = await openDatabase({ kind: 'postgres', url, poolMax: 1, statementTimeoutMs: 10_000, connectTimeoutMs: 200 });
    try {
      // The default (5 s) is far beyond this test's own timeout.
      const err = await sql`select 1`.execute(database.db).then(
        () => null,
        (e: unknown) => e,
      );
      expect(isDatabaseError(err)).toBe(true);
      expect(databaseErrorKind(err)).toBe('timeout');
    } finally {
      await database.close();
      silent.close();
    }
  }, 3_000);

  it('an unreachable server is answered as database_error, also while authenticating', async () => {
    const url = `postgres://u:p@127.0.0.1:${await closedPort()}/none`;
    const database = await openDatabase({ kind: 'postgres', url, poolMax: 2, statementTimeoutMs: 1_000 });
    try {
      const err = await sql`select 1`.execute(database.db).then(
        () => null,
        (e: unknown) => e,
      );
      expect(isDatabaseError(err)).toBe(true);
    } finally {
      await database.close();
    }
    const t = await appOn({ kind: 'postgres', url, poolMax: 2, statementTimeoutMs: 1_000 }, { prepare: false });
    open.push(t);
    expectDatabaseError(await get(t));
  });
});

describe.each(dialects())('database failures on %s (HTTP)', (dialect) => {
  it('a query that fails inside the database is a database_error for that endpoint only', async () => {
    const t = await appOn(await ownTarget(dialect));
    open.push(t);
    expect((await get(t)).statusCode).toBe(200);
    await sql`drop table citas_por_dia`.execute(t.database.db);
    // A page that must be built fails; the page kept under a tag that is still current (the page
    // cache) is still answered: nothing it shows has changed.
    expectDatabaseError(await get(t, `${PATH}&limit=7`));
    expect((await get(t)).statusCode).toBe(200);
    expect((await get(t, '/api/v1/llamadas')).statusCode).toBe(200);
  });

  it('a closed database handle is a database_error', async () => {
    const t = await appOn(await ownTarget(dialect));
    open.push(t);
    expect((await get(t)).statusCode).toBe(200);
    await t.database.close();
    expectDatabaseError(await get(t));
  });
});
