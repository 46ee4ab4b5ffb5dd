// The request log's batch writer and retention, below HTTP (services/request-log.ts,
// request-log-retention.ts), migration 010's backfill of the events' clienta and 012's conversion
// of the access record to sets: entries written in chunks with their access sets, each distinct
// set once a day; a bound on what waits in memory, with the drops counted; a write refused by
// SQLite's write lock (another process holding it) keeps its entries for the next one; retention
// removes old entries and the sets no entry names any more, and nothing newer. Both databases.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { Migrator, type Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { openDatabase, WriterBusy, type Database } from '../../src/db/connect.js';
import { migrationsFor } from '../../src/db/migrations/index.js';
import type { DB } from '../../src/db/schema.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { requestLogRowMaker } from '../../src/http/request-log-row.js';
import { accessOfEntry, accessPage, logPage } from '../../src/repos/request-log.js';
import { RequestLog, type RawLogEntry } from '../../src/services/request-log.js';
import { RequestLogRetention } from '../../src/services/request-log-retention.js';
import { dialects, freshDatabase, freshTarget } from '../helpers/db.js';

const DAY = 86_400_000;
const NOW = Date.UTC(2026, 2, 28, 12);
const CLINIC = 'c-1';
const clienta = (n: number) => `0a000001-0000-4000-8000-${String(n).padStart(12, '0')}`;

function entry(n: number, over: Partial<RawLogEntry> = {}): RawLogEntry {
  return {
    clinicId: CLINIC,
    atMs: NOW,
    requestId: `req-${n}`,
    keyId: 'k-1',
    grantId: null,
    method: 'GET',
    url: '/api/v1/clientas?limit=100',
    status: 200,
    errorCode: null,
    durationMs: 1.25,
    records: 3,
    ip: '127.0.0.1',
    userAgent: 'test',
    errorBody: null,
    clientas: [clienta(n), clienta(n + 1), clienta(n + 2)],
    ...over,
  };
}

const quiet = { info: () => {}, error: () => {} };

/** The clinics the entries belong to: the writer writes only entries of clinics that exist. */
async function addClinics(db: Kysely<DB>, ...ids: string[]): Promise<void> {
  for (const id of ids)
    await db
      .insertInto('clinics')
      .values({ id, name: id, timezone: 'Europe/Madrid', currency: 'EUR', plan: 'premium', language: 'es', created_at: NOW })
      .execute();
}

describe.each(dialects())('request log writer and retention on %s', (dialect) => {
  let database: Database;
  beforeAll(async () => {
    database = await freshDatabase(dialect);
    await addClinics(database.db, CLINIC);
  });
  afterAll(async () => {
    await database?.close();
  });

  it('writes every entry collected, with its access rows, in chunks; entries past the bound are dropped and counted', async () => {
    const counted = { dropped: 0, written: 0 };
    const log = new RequestLog(database, {
      toRow: requestLogRowMaker('svc'),
      maxPending: 1_200,
      observer: { dropped: (n) => (counted.dropped += n), written: (n) => (counted.written += n), pending: () => {} },
    });
    for (let i = 0; i < 1_250; i++) log.record(entry(i));
    expect(log.pending).toBe(1_200);
    expect(counted.dropped).toBe(50);
    await log.flush();
    expect(log.pending).toBe(0);
    expect(counted.written).toBe(1_200);
    const rows = await logPage(database.db, CLINIC, {}, null, 5_000);
    expect(rows).toHaveLength(1_200);
    expect(new Set(rows.map((r) => r.id)).size).toBe(1_200);
    const one = rows.find((r) => r.request_id === 'req-7')!;
    expect(one).toMatchObject({ path: '/api/v1/clientas', query: 'limit=100', records: 3, duration_ms: 1.3 });
    expect((await accessOfEntry(database.db, CLINIC, one.id)).sort()).toEqual([clienta(7), clienta(8), clienta(9)]);
    expect((await accessPage(database.db, CLINIC, clienta(9), null, 100)).map((r) => r.request_id).sort()).toEqual([
      'req-7',
      'req-8',
      'req-9',
    ]);
    expect(await accessPage(database.db, 'another-clinic', clienta(9), null, 100)).toEqual([]);
  });

  it("lets the event loop run between its chunks: a second's entries never hold it in one piece", async () => {
    const database = await freshDatabase(dialect);
    onTestFinished(() => database.close());
    await addClinics(database.db, CLINIC);
    const steps: string[] = [];
    const log = new RequestLog(database, {
      toRow: requestLogRowMaker('svc'),
      observer: { dropped: () => {}, written: (n) => steps.push(`wrote ${n}`), pending: () => {} },
    });
    for (let i = 0; i < 350; i++) log.record(entry(i, { atMs: NOW + i }));
    // What a request arriving during the write would run: a callback of the event loop's next turn.
    let flushed = false;
    const tick = () => {
      if (steps.at(-1) !== 'turn') steps.push('turn');
      if (!flushed) setImmediate(tick);
    };
    setImmediate(tick);
    await log.flush();
    flushed = true;
    const writes = steps.filter((s) => s.startsWith('wrote'));
    expect(writes).toEqual(['wrote 100', 'wrote 100', 'wrote 100', 'wrote 50']);
    // A turn of the loop between every two chunks.
    const between = steps.slice(steps.indexOf('wrote 100'), steps.lastIndexOf('wrote 50'));
    expect(between.filter((s) => s.startsWith('wrote'))).toHaveLength(3);
    expect(between.filter((s) => s === 'turn')).toHaveLength(3);
    for (let i = 1; i < between.length; i++) if (between[i]!.startsWith('wrote')) expect(between[i - 1]).toBe('turn');
  });

  it('stores each distinct set of clientas once a day, however many responses disclosed it', async () => {
    const database = await freshDatabase(dialect);
    onTestFinished(() => database.close());
    await addClinics(database.db, 'c-3');
    const page = Array.from({ length: 100 }, (_, i) => clienta(80_000 + i));
    const log = new RequestLog(database, { toRow: requestLogRowMaker('svc') });
    // The same page polled 1,199 times (in two flushes), each time a new array as a handler makes
    // it; a clienta with two citas on the page is listed twice (stored once).
    const polled = () => [...page, page[0]!];
    for (let i = 0; i < 600; i++) log.record(entry(i, { clinicId: 'c-3', requestId: `poll-${i}`, clientas: polled() }));
    await log.flush();
    for (let i = 600; i < 1_199; i++) log.record(entry(i, { clinicId: 'c-3', requestId: `poll-${i}`, clientas: polled() }));
    // The same clientas in another order: a set of its own (the same page read again keeps its order).
    log.record(entry(0, { clinicId: 'c-3', requestId: 'reversed', clientas: [...page].reverse() }));
    // A list page names its set by its tag: two responses under one tag share it.
    log.record(entry(0, { clinicId: 'c-3', requestId: 'tagged-1', clientas: page, tag: '"page-tag"' }));
    log.record(entry(0, { clinicId: 'c-3', requestId: 'tagged-2', clientas: [...page], tag: '"page-tag"' }));
    // ... and the page the next day: a set of that day.
    log.record(entry(0, { clinicId: 'c-3', requestId: 'next-day', atMs: NOW + DAY, clientas: page }));
    await log.flush();
    const setRows = await database.db
      .selectFrom('request_access_sets')
      .select((eb) => eb.fn.countAll().as('n'))
      .executeTakeFirstOrThrow();
    expect(Number(setRows.n)).toBe(400);
    const logged = await database.db.selectFrom('request_log').select(['request_id', 'access_set']).execute();
    const setOf = (id: string) => Buffer.from(logged.find((r) => r.request_id === id)!.access_set!).toString('hex');
    expect(setOf('tagged-1')).toBe(setOf('tagged-2'));
    expect(setOf('poll-0')).toBe(setOf('poll-1198'));
    expect(new Set(['poll-0', 'reversed', 'tagged-1', 'next-day'].map(setOf)).size).toBe(4);
    const her = await accessPage(database.db, 'c-3', clienta(80_042), null, 5_000);
    expect(her).toHaveLength(1_203);
    expect(her[0]!.request_id).toBe('next-day');
    expect(her.map((r) => r.id)).toEqual([...her.map((r) => r.id)].sort((a, b) => b - a));
    // Paging: after the first 1,000, the rest.
    const rest = await accessPage(database.db, 'c-3', clienta(80_042), her[999]!.id, 5_000);
    expect(rest.map((r) => r.id)).toEqual(her.slice(1_000).map((r) => r.id));
    const one = (await logPage(database.db, 'c-3', {}, null, 1))[0]!;
    expect((await accessOfEntry(database.db, 'c-3', one.id)).sort()).toEqual([...page].sort());
    expect(await accessOfEntry(database.db, CLINIC, one.id)).toEqual([]);
  });

  it('retention removes the entries older than the period and the sets no entry names, in batches, and keeps the newer', async () => {
    // A database of its own: its oldest rows are first, as they are in service.
    const database = await freshDatabase(dialect);
    onTestFinished(() => database.close());
    await addClinics(database.db, 'c-2');
    const log = new RequestLog(database, { toRow: requestLogRowMaker('svc') });
    for (let i = 0; i < 700; i++) log.record(entry(10_000 + i, { clinicId: 'c-2', atMs: NOW - 31 * DAY + i }));
    // written late, among older ones: kept
    log.record(entry(20_005, { clinicId: 'c-2', atMs: NOW - 30 * DAY + 60_000 }));
    for (let i = 0; i < 300; i++) log.record(entry(30_000 + i, { clinicId: 'c-2', atMs: NOW - 31 * DAY + 1000 + i }));
    for (let i = 0; i < 5; i++) log.record(entry(20_000 + i, { clinicId: 'c-2', atMs: NOW - 29 * DAY }));
    await log.flush();
    const retention = new RequestLogRetention(database, { days: 30, now: () => NOW, log: quiet });
    const pass = await retention.pass();
    expect(pass.entries).toBe(1_000);
    expect(pass.batches).toBeGreaterThan(1);
    const left = await logPage(database.db, 'c-2', {}, null, 5_000);
    expect(left.map((r) => r.request_id).sort()).toEqual(['req-20000', 'req-20001', 'req-20002', 'req-20003', 'req-20004', 'req-20005']);
    expect(await accessPage(database.db, 'c-2', clienta(10_002), null, 100)).toEqual([]);
    // Each left entry's set is kept (3 clientas each), and no set that no entry names.
    const sets = await database.db
      .selectFrom('request_access_sets as a')
      .leftJoin('request_log as l', 'l.access_set', 'a.set_id')
      .select(['a.set_id', 'l.id'])
      .execute();
    expect(sets.filter((r) => r.id === null)).toEqual([]);
    expect(sets).toHaveLength(18);
    expect(await accessPage(database.db, 'c-2', clienta(20_006), null, 100)).toHaveLength(2);
    // Nothing older left: the next pass removes nothing.
    expect((await retention.pass()).entries).toBe(0);
  });

  it('writes no entry of a clinic that no longer exists, and retention removes any left of one, whatever their age', async () => {
    const database = await freshDatabase(dialect);
    onTestFinished(() => database.close());
    await addClinics(database.db, 'c-live', 'c-gone');
    const log = new RequestLog(database, { toRow: requestLogRowMaker('svc') });
    // Written while the clinic existed (as by another instance just before its deletion) ...
    for (let i = 0; i < 30; i++) log.record(entry(40_000 + i, { clinicId: 'c-gone' }));
    await log.flush();
    await database.db.deleteFrom('clinics').where('id', '=', 'c-gone').execute();
    // ... and collected after it: not written; the live clinic's entries in the same batch are.
    for (let i = 0; i < 3; i++) {
      log.record(entry(50_000 + i, { clinicId: 'c-gone' }));
      log.record(entry(60_000 + i, { clinicId: 'c-live' }));
    }
    log.record(entry(70_000, { clinicId: 'never-existed' }));
    await log.flush();
    expect(log.pending).toBe(0);
    expect((await logPage(database.db, 'c-gone', {}, null, 100)).map((r) => r.request_id).filter((r) => r >= 'req-50000')).toEqual([]);
    expect(await logPage(database.db, 'never-existed', {}, null, 100)).toEqual([]);
    expect((await logPage(database.db, 'c-live', {}, null, 100)).map((r) => r.request_id).sort()).toEqual([
      'req-60000',
      'req-60001',
      'req-60002',
    ]);
    expect(await accessPage(database.db, 'c-live', clienta(60_001), null, 100)).toHaveLength(2);

    // Retention (nothing is old) removes the deleted clinic's 30 entries and their access rows, and only them.
    const pass = await new RequestLogRetention(database, { days: 30, now: () => NOW, log: quiet }).pass();
    expect(pass).toMatchObject({ entries: 30, access: 90 });
    expect(await logPage(database.db, 'c-gone', {}, null, 100)).toEqual([]);
    expect(await logPage(database.db, 'c-live', {}, null, 100)).toHaveLength(3);
    const access = await database.db
      .selectFrom('request_access_sets')
      .select((eb) => eb.fn.countAll().as('n'))
      .executeTakeFirstOrThrow();
    expect(Number(access.n)).toBe(9);
  });
});

describe('request log writer on a SQLite file whose write lock another process holds', () => {
  let dir: string;
  let database: Database;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'reqlog-'));
    database = await openDatabase({ kind: 'sqlite', file: join(dir, 'clinic.db'), busyTimeoutMs: 0 });
    await migrateToLatest(database);
    await addClinics(database.db, CLINIC);
  });
  afterAll(async () => {
    await database?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('keeps the entries of a refused write and writes them once the lock is free', async () => {
    const log = new RequestLog(database, { toRow: requestLogRowMaker('svc') });
    for (let i = 0; i < 3; i++) log.record(entry(i));
    const other = new BetterSqlite3(join(dir, 'clinic.db'));
    other.exec('begin immediate');
    try {
      await expect(log.flush(0)).rejects.toBeInstanceOf(WriterBusy);
      log.record(entry(3));
      expect(log.pending).toBe(4);
    } finally {
      other.exec('rollback');
      other.close();
    }
    await log.flush(0);
    expect(log.pending).toBe(0);
    expect((await logPage(database.db, CLINIC, {}, null, 100)).map((r) => r.request_id).sort()).toEqual([
      'req-0',
      'req-1',
      'req-2',
      'req-3',
    ]);
  });
});

describe.each(dialects())('migration 010-request-log on %s', (dialect) => {
  it("backfills each existing event's clienta where its record still says it", async () => {
    const database = await openDatabase(await freshTarget(dialect));
    try {
      const migrator = new Migrator({ db: database.db, provider: { getMigrations: async () => migrationsFor(database.dialect) } });
      expect((await migrator.migrateTo('009-key-scopes')).error).toBeUndefined();
      const db = database.db as unknown as Kysely<Record<string, Record<string, unknown>>>;
      const base = { clinic_id: 'c1', created_at: 0, updated_at: 0 };
      await db
        .insertInto('clinics')
        .values({ id: 'c1', name: 'Antes', timezone: 'Europe/Madrid', currency: 'EUR', plan: 'premium', language: 'es', created_at: 0 })
        .execute();
      await db
        .insertInto('clientas')
        .values(await fill(database, 'clientas', { ...base, id: clienta(1) }))
        .execute();
      await db
        .insertInto('citas')
        .values(await fill(database, 'citas', { ...base, id: 'cita-1', clienta_id: clienta(1) }))
        .execute();
      const ev = (seq: number, tipo: string, record: string) => ({
        clinic_id: 'c1',
        seq,
        id: `e${seq}`,
        tipo,
        record_id: record,
        ocurrido_at: 0,
        datos: '{}',
      });
      await db
        .insertInto('events')
        .values([ev(1, 'clienta.creada', clienta(1)), ev(2, 'cita.creada', 'cita-1'), ev(3, 'cita.eliminada', 'cita-gone')])
        .execute();
      expect(await migrateToLatest(database)).toContain('010-request-log');
      const rows = await database.db.selectFrom('events').select(['seq', 'clienta_id']).orderBy('seq').execute();
      expect(rows.map((r) => [Number(r.seq), r.clienta_id])).toEqual([
        [1, clienta(1)],
        [2, clienta(1)],
        [3, null],
      ]);
    } finally {
      await database.close();
    }
  });
});

describe.each(dialects())('migration 012-access-sets on %s', (dialect) => {
  it("converts 010's access rows into sets named by their log rows, equal sets stored once", async () => {
    const database = await openDatabase(await freshTarget(dialect));
    try {
      const migrator = new Migrator({ db: database.db, provider: { getMigrations: async () => migrationsFor(database.dialect) } });
      expect((await migrator.migrateTo('011-oauth')).error).toBeUndefined();
      const db = database.db as unknown as Kysely<Record<string, Record<string, unknown>>>;
      const row = (id: number, clinic: string, atMs: number) => ({
        id,
        clinic_id: clinic,
        at_ms: atMs,
        request_id: `r${id}`,
        method: 'GET',
        path: '/api/v1/clientas',
        status: 200,
        duration_ms: 1,
      });
      // 1 and 2: the same clientas on the same day; 3: the same a day later; 4: another clinic; 5: nobody.
      await db
        .insertInto('request_log')
        .values([row(1, 'c1', NOW), row(2, 'c1', NOW + 1000), row(3, 'c1', NOW + DAY), row(4, 'c2', NOW), row(5, 'c1', NOW)])
        .execute();
      const bytes = (n: number) => Buffer.from(clienta(n).replace(/-/g, ''), 'hex');
      const access = [1, 2, 3].flatMap((log) => [1, 2].map((n) => ({ log_id: log, clienta: bytes(n) })));
      await db
        .insertInto('request_access')
        .values([...access, { log_id: 4, clienta: bytes(1) }])
        .execute();
      expect(await migrateToLatest(database)).toContain('012-access-sets');
      const logs = await database.db.selectFrom('request_log').select(['id', 'access_set']).orderBy('id').execute();
      const hex = logs.map((r) => (r.access_set === null ? null : Buffer.from(r.access_set).toString('hex')));
      expect(hex[0]).toBe(hex[1]);
      expect(new Set(hex.slice(0, 4)).size).toBe(3);
      expect(hex[4]).toBeNull();
      const sets = await database.db.selectFrom('request_access_sets').select('set_id').execute();
      expect(sets).toHaveLength(5);
      expect((await accessOfEntry(database.db, 'c1', 2)).sort()).toEqual([clienta(1), clienta(2)]);
      expect((await accessPage(database.db, 'c1', clienta(1), null, 10)).map((r) => r.id)).toEqual([3, 2, 1]);
      expect((await accessPage(database.db, 'c2', clienta(1), null, 10)).map((r) => r.id)).toEqual([4]);
      const tables = (await database.db.introspection.getTables()).map((t) => t.name);
      expect(tables).not.toContain('request_access');
    } finally {
      await database.close();
    }
  });
});

/** The row with every other not-null column filled (a row as stored before the migration). */
async function fill(database: Database, table: string, row: Record<string, unknown>): Promise<Record<string, unknown>> {
  const t = (await database.db.introspection.getTables()).find((x) => x.name === table)!;
  const out = { ...row };
  for (const c of t.columns) {
    if (c.name in out || c.isNullable || c.hasDefaultValue) continue;
    out[c.name] = /int|real|numeric|double/i.test(c.dataType) ? 1 : 'x';
  }
  return out;
}
