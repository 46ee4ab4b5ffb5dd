// PostgreSQL failing under a running server process: stopped, restarted (fast and after a crash,
// repeatedly, under load), frozen (SIGSTOP). The process must live through all of it, answer
// every request (200, or 500 database_error with Retry-After, never a hang or a reset), and serve
// again within 5 s of the database returning, without a restart (README, docs/operations.md).
//
// The suite's shared PostgreSQL is not the one to break: this file starts its own.
import { randomBytes, randomUUID } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashKey, keyHint } from '../../src/services/api-keys.js';
import { createDatabase } from '../../tools/postgres-database.js';
import { startEmbeddedPostgres, type PgServer } from '../../tools/postgres-server.js';
import { dialects } from '../helpers/db.js';
import { fetchOutcome, firstSuccess, steadyLoad, type Load, type Outcome } from '../helpers/load.js';
import { startServerProcess, type ServerProcess } from '../helpers/server-process.js';
import { pause, until } from '../helpers/wait.js';

const STATEMENT_TIMEOUT_MS = 1_000;
const CONNECT_TIMEOUT_MS = 1_000;
/** What the contract allows a request while the database fails, plus slack for a busy machine. */
const ANSWER_WITHIN_MS = STATEMENT_TIMEOUT_MS + CONNECT_TIMEOUT_MS + 2_000;
const RESUME_WITHIN_MS = 5_000;
const PATH = '/api/v1/citas?limit=5';
const PEPPER = 'faults-pepper-0123456789abcdefghijklmnopqrstuvwxyz';

/** Every outcome is a 200 or the contract's database_error; a 0 is a hang or a reset. */
function expectOnlySuccessOrDatabaseError(outcomes: Outcome[]) {
  const bad = outcomes.filter((o) => o.status !== 200 && !(o.status === 500 && o.code === 'database_error' && o.retryAfter !== null));
  expect(bad.slice(0, 5), `${bad.length} of ${outcomes.length} outcomes were neither 200 nor database_error`).toEqual([]);
}

/** Until the load has been served `n` more times: the fault then hits a server at work. */
async function servedMore(load: Load, n: number): Promise<void> {
  const served = () => load.outcomes.filter((o) => o.status === 200).length;
  const target = served() + n;
  await until(() => served() >= target, `${n} more requests served`);
}

describe.skipIf(!dialects().includes('postgres'))('database faults under a running server (PostgreSQL)', () => {
  let db: PgServer;
  let server: ServerProcess;
  let headers: Record<string, string>;
  let url: string;
  let dbUrl: string;

  beforeAll(async () => {
    db = await startEmbeddedPostgres();
    dbUrl = await createDatabase(db.url, 'faults');
    server = await startServerProcess({
      env: {
        DATABASE_URL: dbUrl,
        API_KEY_PEPPER: PEPPER,
        DB_POOL_MAX: '4',
        DB_STATEMENT_TIMEOUT_MS: String(STATEMENT_TIMEOUT_MS),
        DB_CONNECT_TIMEOUT_MS: String(CONNECT_TIMEOUT_MS),
        // Usage counts are written every second, so that writes fail while the database is away.
        USAGE_FLUSH_INTERVAL_S: '1',
        RATE_LIMIT_RPS: '10000',
        RATE_LIMIT_BURST: '10000',
      },
    });
    headers = { authorization: `Bearer ${server.key}` };
    url = server.baseUrl + PATH;
  });
  /** The process still runs; if not, its last output says why. */
  const expectAlive = () => expect(server.alive(), `the server died:\n${server.output().slice(-2500)}`).toBe(true);

  afterAll(async () => {
    await server?.kill();
    await db?.stop();
  });

  it('answers before any fault', async () => {
    expect((await fetchOutcome(url, headers, ANSWER_WITHIN_MS)).status).toBe(200);
  });

  it('lives through three fast restarts under load, and serves again after each within 5 s', async () => {
    const load = steadyLoad(url, headers, 8, ANSWER_WITHIN_MS);
    try {
      for (let i = 0; i < 3; i++) {
        await servedMore(load, 8);
        // Every backend ends its connection with 57P01, also the pool's idle and checked-out ones.
        await db.shutdown('fast');
        await pause(100); // down for a moment: the fault's length is the point
        await db.start();
        expectAlive();
        expect(await firstSuccess(url, headers, RESUME_WITHIN_MS), `restart ${i + 1}: no 200 within 5 s`).not.toBeNull();
      }
    } finally {
      await load.stop();
    }
    expectOnlySuccessOrDatabaseError(load.outcomes);
    expect(load.outcomes.filter((o) => o.status === 200).length).toBeGreaterThan(10);
  });

  it('answers database_error at once while the database is down (crashes and a slow start), then serves again', async () => {
    const load = steadyLoad(url, headers, 6, ANSWER_WITHIN_MS);
    let during: Outcome[] = [];
    try {
      // A crash (immediate shutdown) and a quick start, twice, then one that stays down for 2 s.
      for (const downMs of [100, 100, 2_000]) {
        await servedMore(load, 6);
        await db.shutdown('immediate');
        const from = load.outcomes.length;
        await pause(downMs); // the fault's length is the point
        during = load.outcomes.slice(from);
        await db.start();
        expectAlive();
        expect(await firstSuccess(url, headers, RESUME_WITHIN_MS)).not.toBeNull();
      }
    } finally {
      await load.stop();
    }
    expectOnlySuccessOrDatabaseError(load.outcomes);
    // Refused connections fail fast: many answers in the last 2 s, every one a database_error.
    expect(during.filter((o) => o.code === 'database_error').length).toBeGreaterThan(4);
    expectAlive();
  });

  it('answers database_error within the statement timeout plus connect time while the database is frozen, then serves again', async () => {
    expect((await fetchOutcome(url, headers, ANSWER_WITHIN_MS)).status).toBe(200);
    const LOAD_LOOPS = 6;
    const load = steadyLoad(url, headers, LOAD_LOOPS, ANSWER_WITHIN_MS);
    let during: Outcome[] = [];
    try {
      await servedMore(load, 6);
      db.freeze();
      const from = load.outcomes.length;
      // Every loop of the load gets an answer while it is frozen, within its bound (the load's own
      // timeout turns a hang into a status 0): database_error once a statement or connection times out.
      await until(
        () => load.outcomes.length - from >= LOAD_LOOPS && load.outcomes.slice(from).some((o) => o.code === 'database_error'),
        'an answer to every loop of the load, one of them a database_error, while frozen',
        2 * ANSWER_WITHIN_MS,
      );
      during = load.outcomes.slice(from);
      db.thaw();
      expect(await firstSuccess(url, headers, RESUME_WITHIN_MS)).not.toBeNull();
    } finally {
      db.thaw();
      await load.stop();
    }
    expectOnlySuccessOrDatabaseError(load.outcomes);
    expect(during.some((o) => o.code === 'database_error')).toBe(true);
    expectAlive();
  });

  it('logs background writes that fail (usage counts, the last use of a key) and keeps serving', async () => {
    // The database refuses these writes and serves reads: the background tasks fail, requests do not.
    const admin = new pg.Client({ connectionString: dbUrl });
    await admin.connect();
    try {
      await admin.query(
        `create function refuse() returns trigger language plpgsql as $$ begin raise exception 'refused by the test'; end $$`,
      );
      await admin.query('create trigger refuse_usage before insert or update on api_key_usage for each row execute function refuse()');
      await admin.query('create trigger refuse_touch before update on api_keys for each row execute function refuse()');
      // A key never used yet, so that its first request writes its last use.
      const key = `svc_${randomBytes(32).toString('base64url')}`;
      const clinic = (await admin.query<{ id: string }>('select id from clinics limit 1')).rows[0]!.id;
      await admin.query(`insert into api_keys (id, clinic_id, name, key_hash, hint, created_at) values ($1, $2, 'fresh', $3, $4, $5)`, [
        randomUUID(),
        clinic,
        hashKey(PEPPER, key),
        keyHint(key),
        Math.floor(Date.now() / 1000),
      ]);
      const failures = () =>
        server
          .logs()
          .filter((l) => l.msg === 'background task failed')
          .map((l) => l.task);
      const before = failures().length;
      for (const k of [server.key, key, server.key])
        expect((await fetchOutcome(url, { authorization: `Bearer ${k}` }, ANSWER_WITHIN_MS)).status).toBe(200);
      await until(
        () => failures().slice(before).includes('usage flush') && failures().slice(before).includes('last_used_at'),
        'both background writes to fail',
        5_000,
      );
      expect(new Set(failures().slice(before))).toEqual(new Set(['usage flush', 'last_used_at']));
      await admin.query('drop trigger refuse_usage on api_key_usage');
      await admin.query('drop trigger refuse_touch on api_keys');
      expect((await fetchOutcome(url, headers, ANSWER_WITHIN_MS)).status).toBe(200);
      expectAlive();
    } finally {
      await admin.end();
    }
  });
});
