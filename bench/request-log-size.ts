// Bytes per request-log entry and per access-set row, and the retention's longest hold of the
// write lock, on both databases (docs/benchmarks.md, "Request log"). Run: npm run bench:request-log
// [-- --entries N --per-page N --pages N]. Writes N entries of a polling integration (each
// disclosing --per-page clientas, cycling through --pages distinct pages; --pages 0: every entry
// a page of its own, the worst case for the access sets) with the log's own writer, measures the
// tables and indexes, then makes them all older than the period and times the purge's batches.
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { openDatabase, type Database } from '../src/db/connect.js';
import { migrateToLatest } from '../src/db/migrate.js';
import { requestLogRowMaker } from '../src/http/request-log-row.js';
import { RequestLog, type RawLogEntry } from '../src/services/request-log.js';
import { RequestLogRetention } from '../src/services/request-log-retention.js';
import { startEmbeddedPostgres } from '../tools/postgres-server.js';

const arg = (name: string, def: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i < 0 ? def : Number(process.argv[i + 1]);
};
const ENTRIES = arg('entries', 20_000);
const PER_PAGE = arg('per-page', 100);
const PAGES = arg('pages', 200);
const NOW = Date.UTC(2026, 2, 28, 12);
const CLINIC = '5d0b4c7e-1b1a-4c55-9f0e-3f4b2a1c9d10';

function entries(clientas: string[]): RawLogEntry[] {
  const out: RawLogEntry[] = [];
  for (let i = 0; i < ENTRIES; i++) {
    const start = PAGES === 0 ? i % (clientas.length - PER_PAGE) : ((i % PAGES) * PER_PAGE) % (clientas.length - PER_PAGE);
    out.push({
      clinicId: CLINIC,
      atMs: NOW + i * 86,
      requestId: randomUUID(),
      keyId: '8f14e45f-ceea-467a-9575-3b1e4e0c1c2a',
      grantId: null,
      method: 'GET',
      url: '/api/v1/citas?desde=2026-03-01&hasta=2026-03-31&limit=100&offset=200',
      status: 200,
      errorCode: null,
      durationMs: 3.4,
      records: PER_PAGE,
      ip: '203.0.113.17',
      userAgent: 'Zapier/1.0 (+https://zapier.com)',
      errorBody: null,
      clientas: clientas.slice(start, start + PER_PAGE),
    });
  }
  return out;
}

async function sizes(database: Database, file: string | null): Promise<Record<string, number>> {
  if (database.dialect === 'postgres') {
    const r = await sql<{ name: string; bytes: string }>`select c.relname as name, pg_relation_size(c.oid) as bytes from pg_class c
      where c.relname in ('request_log', 'request_log_pkey', 'request_log_by_time', 'request_log_by_access_set',
        'request_log_by_request_id',
        'request_access_sets', 'request_access_sets_pkey', 'request_access_sets_by_clienta')`.execute(database.db);
    return Object.fromEntries(r.rows.map((x) => [x.name, Number(x.bytes)]));
  }
  const r = await sql<{ name: string; bytes: number }>`select name, sum(pgsize) as bytes from dbstat group by name`.execute(database.db);
  void file;
  return Object.fromEntries(
    r.rows
      .filter((x) => x.name.startsWith('request_') || x.name.startsWith('sqlite_autoindex_request'))
      .map((x) => [x.name, Number(x.bytes)]),
  );
}

async function run(database: Database, label: string, file: string | null) {
  await migrateToLatest(database);
  // The writer writes only entries of clinics that exist.
  await database.db
    .insertInto('clinics')
    .values({ id: CLINIC, name: 'Bench', timezone: 'Europe/Madrid', currency: 'EUR', plan: 'premium', language: 'es', created_at: NOW })
    .execute();
  const clientas = Array.from({ length: 20_000 }, () => randomUUID());
  const log = new RequestLog(database, { toRow: requestLogRowMaker('svc'), maxPending: ENTRIES + 1 });
  for (const e of entries(clientas)) log.record(e);
  const t0 = performance.now();
  await log.flush(60_000);
  const writeMs = performance.now() - t0;
  if (database.dialect === 'postgres') await sql`vacuum analyze request_log, request_access_sets`.execute(database.db);
  const s = await sizes(database, file);
  const logBytes = Object.entries(s)
    .filter(([k]) => k.startsWith('request_log'))
    .reduce((n, [, v]) => n + v, 0);
  const accessBytes = Object.entries(s)
    .filter(([k]) => !k.startsWith('request_log'))
    .reduce((n, [, v]) => n + v, 0);
  const [{ n: accessRows }] = (await sql<{ n: number }>`select count(*) as n from request_access_sets`.execute(database.db)).rows as [
    { n: number },
  ];
  const retention = new RequestLogRetention(database, {
    days: 30,
    now: () => NOW + 31 * 86_400_000 + ENTRIES * 86,
    log: { info() {}, error() {} },
  });
  const p0 = performance.now();
  const pass = await retention.pass();
  const purgeMs = performance.now() - p0;
  console.log(
    JSON.stringify({
      database: label,
      entries: ENTRIES,
      clientasPerEntry: PER_PAGE,
      distinctPages: PAGES === 0 ? ENTRIES : PAGES,
      accessSetRows: Number(accessRows),
      writeMs: Math.round(writeMs),
      bytesPerEntry: Math.round(logBytes / ENTRIES),
      bytesPerAccessSetRow: Math.round(accessBytes / Number(accessRows)),
      perMillionRequestsMB: Math.round((((logBytes + accessBytes) / ENTRIES) * 1e6) / 1e6),
      tables: s,
      purge: { ...pass, maxHoldMs: Math.round(pass.maxHoldMs * 10) / 10, totalMs: Math.round(purgeMs) },
    }),
  );
}

const dir = mkdtempSync(join(tmpdir(), 'reqlog-bench-'));
try {
  const file = join(dir, 'clinic.db');
  const lite = await openDatabase({ kind: 'sqlite', file, busyTimeoutMs: 0 });
  await run(lite, 'sqlite', file);
  await lite.close();
  void statSync;
  const pg = await startEmbeddedPostgres();
  try {
    const database = await openDatabase({ kind: 'postgres', url: pg.url, poolMax: 4, statementTimeoutMs: 0 });
    await run(database, 'postgres', null);
    await database.close();
  } finally {
    await pg.stop();
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
