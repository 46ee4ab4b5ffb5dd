// Usage at a glance: counted in memory, written in batches (never a database write per API
// request), shown per key and day with the last error codes.
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/db/connect.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { encodeCursor } from '../../src/services/feed.js';
import { statusClass, UsageCounter } from '../../src/services/usage.js';
import { appFor, bearer } from '../helpers/app.js';
import { anotherInstance } from '../helpers/runtime.js';
import { dialects } from '../helpers/db.js';
import { buildDashboardApp, Client, EMAILS, type DashboardApp } from './helpers.js';

const DAY = 86_400_000;

describe.each(dialects())('API usage counting on %s', (dialect) => {
  let t: DashboardApp;
  let key: string;
  let keyId: string;
  beforeAll(async () => {
    t = await buildDashboardApp(dialect);
    const issued = await t.keys.create({ clinicId: t.clinicA.id, name: 'Counted', expiresAt: null, createdBy: null });
    key = issued.key;
    keyId = issued.id;
  });
  afterAll(async () => {
    await t?.close();
  });

  const usageRows = () =>
    t.database.db
      .selectFrom('api_key_usage')
      .selectAll()
      .where('key_id', '=', keyId)
      .orderBy('status_class')
      .orderBy('error_code')
      .execute();

  it('counts in memory and writes one batch: no database row until the flush', async () => {
    for (let i = 0; i < 25; i++) expect((await t.app.inject({ url: '/api/v1/citas', headers: bearer(key) })).statusCode).toBe(200);
    for (let i = 0; i < 3; i++) expect((await t.app.inject({ url: '/api/v1/citas?limit=0', headers: bearer(key) })).statusCode).toBe(400);
    expect((await t.app.inject({ url: '/api/v1/clientas?bogus=1', headers: bearer(key) })).statusCode).toBe(400);

    expect(await usageRows()).toHaveLength(0);
    expect(await t.database.db.selectFrom('api_key_errors').selectAll().execute()).toHaveLength(0);
    expect(t.app.usage.pending).toBe(3);

    await t.app.usage.flush();
    expect(t.app.usage.pending).toBe(0);
    const rows = await usageRows();
    expect(rows.map((r) => [r.day, r.status_class, r.error_code, Number(r.n)])).toEqual([
      ['2026-03-28', '2xx', '', 25],
      ['2026-03-28', '4xx', 'invalid_parameter', 3],
      ['2026-03-28', '4xx', 'unknown_parameter', 1],
    ]);
    const errs = await t.database.db.selectFrom('api_key_errors').selectAll().where('key_id', '=', keyId).orderBy('error_code').execute();
    expect(errs.map((r) => [r.error_code, Number(r.status), Number(r.n), Number(r.last_at)])).toEqual([
      ['invalid_parameter', 400, 3, FIXTURE_S()],
      ['unknown_parameter', 400, 1, FIXTURE_S()],
    ]);
  });

  const FIXTURE_S = () => Math.floor(t.clock.now / 1000);

  it('adds later batches to the stored counts, on the clinic’s local day', async () => {
    for (let i = 0; i < 5; i++) await t.app.inject({ url: '/api/v1/llamadas', headers: bearer(key) });
    await t.app.usage.flush();
    // 23:30 UTC on 28 March is already 29 March in Madrid (UTC+1)
    t.clock.now = Date.UTC(2026, 2, 28, 23, 30);
    await t.app.inject({ url: '/api/v1/llamadas', headers: bearer(key) });
    await t.app.usage.flush();
    const ok = (await usageRows()).filter((r) => r.status_class === '2xx').map((r) => [r.day, Number(r.n)]);
    expect(ok).toEqual([
      ['2026-03-28', 30],
      ['2026-03-29', 1],
    ]);
  });

  it('does not count requests without a valid key (there is no key to count them for)', async () => {
    const before = t.app.usage.pending;
    await t.app.inject({ url: '/api/v1/citas' });
    await t.app.inject({ url: '/api/v1/citas', headers: bearer('svc_unknownunknownunknown') });
    expect(t.app.usage.pending).toBe(before);
  });

  it('shows requests per day and the last error codes on the page, including what is not yet written', async () => {
    await t.app.inject({ url: '/api/v1/citas?desde=2026-02-30', headers: bearer(key) });
    // a position the feed never had: 410 cursor_expired, whose help the page once left blank
    const gone = await t.app.inject({ url: `/api/v1/eventos?cursor=${encodeCursor(1_000_000, t.clinicA.id)}`, headers: bearer(key) });
    expect(gone.statusCode).toBe(410);
    const owner = new Client(t.app);
    await owner.signIn(EMAILS.ownerA);
    const page = (await owner.get('/dashboard/settings/api')).body;
    expect(page).toContain('Uso en los últimos 7 días');
    expect(page).toContain('id="usage-' + keyId + '"');
    // 28 March: 25 + 3 + 1 + 5; 29 March: 1 ok + 2 pending errors
    expect(page).toContain('sábado, 28 de marzo: 30 correctas, 4 con error');
    expect(page).toContain('domingo, 29 de marzo: 1 correcta, 2 con error'); // singular: not "1 correctas"
    expect(page).toContain('37 peticiones');
    expect(page).toMatch(
      /<code>400 invalid_parameter<\/code>\s*<span class="what">una petición llevaba un parámetro con un valor incorrecto · 4 veces</,
    );
    expect(page).toMatch(/<code>400 unknown_parameter<\/code>[\s\S]*?· 1 vez</);
    expect(page).toMatch(
      /<code>410 cursor_expired<\/code>\s*<span class="what">una petición pidió a \/eventos cambios más antiguos [^<·]+ · 1 vez</,
    );
  });

  it('flushes what is pending when the runtime closes (the app closing stops nothing)', async () => {
    const t2 = await buildDashboardApp(dialect);
    // Another instance on the same database: closing its runtime leaves the database open to read.
    const other = anotherInstance(t2.rt);
    const app = await appFor(other);
    const k = await t2.keys.create({ clinicId: t2.clinicB.id, name: 'Closing', expiresAt: null, createdBy: null });
    for (let i = 0; i < 4; i++) await app.inject({ url: '/api/v1/citas', headers: bearer(k.key) });
    await app.close();
    expect(other.usage.pending).toBe(1);
    await other.close();
    const rows = await t2.database.db.selectFrom('api_key_usage').selectAll().where('key_id', '=', k.id).execute();
    await t2.close();
    expect(rows.map((r) => [r.day, r.status_class, Number(r.n)])).toEqual([['2026-03-28', '2xx', 4]]); // Mexico City: still the 28th
  });
});

describe('UsageCounter', () => {
  let database: Awaited<ReturnType<typeof openDatabase>>;
  beforeAll(async () => {
    database = await openDatabase({ kind: 'sqlite', file: ':memory:' });
    await migrateToLatest(database);
  });
  afterAll(async () => {
    await database.close();
  });

  it('classes statuses', () => {
    expect([200, 204, 304, 400, 401, 429, 500, 503].map(statusClass)).toEqual(['2xx', '2xx', '3xx', '4xx', '4xx', '4xx', '5xx', '5xx']);
  });

  it('keeps its counts when a flush fails, and writes them at the next one', async () => {
    const db = database.db;
    await db
      .insertInto('clinics')
      .values({ id: 'c0', name: 'C0', timezone: 'UTC', currency: 'EUR', plan: 'premium', language: 'en', created_at: 0 })
      .execute();
    await db
      .insertInto('api_keys')
      .values({
        id: 'k0',
        clinic_id: 'c0',
        name: 'K0',
        key_hash: 'h0',
        hint: 'abcd',
        created_by: null,
        created_at: 0,
        expires_at: null,
        revoked_at: null,
        last_used_at: null,
        scopes: 'citas:read',
      })
      .execute();
    const u = new UsageCounter(db);
    const at = Date.UTC(2026, 0, 1);
    // the table is away: the batch fails and is rolled back (a key that does not exist is dropped
    // instead, as a clinic deleted meanwhile takes its keys: test/db/clinic-deletion.test.ts)
    await sql`alter table api_key_usage rename to api_key_usage_away`.execute(db);
    u.record({ keyId: 'k0', clinicId: 'c0', timezone: 'UTC', status: 200, errorCode: null, atMs: at });
    u.record({ keyId: 'k0', clinicId: 'c0', timezone: 'UTC', status: 429, errorCode: 'too_many_requests', atMs: at });
    await expect(u.flush()).rejects.toThrow();
    expect(u.pending).toBe(2);
    u.record({ keyId: 'k0', clinicId: 'c0', timezone: 'UTC', status: 200, errorCode: null, atMs: at });
    await sql`alter table api_key_usage_away rename to api_key_usage`.execute(db);
    await u.flush();
    expect(u.pending).toBe(0);
    const rows = await db
      .selectFrom('api_key_usage')
      .select(['status_class', 'n'])
      .where('key_id', '=', 'k0')
      .orderBy('status_class')
      .execute();
    expect(rows.map((r) => [r.status_class, Number(r.n)])).toEqual([
      ['2xx', 2],
      ['4xx', 1],
    ]);
  });

  it('keeps the five most recent distinct error codes per key', async () => {
    const db = database.db;
    await db
      .insertInto('clinics')
      .values({ id: 'c1', name: 'C', timezone: 'UTC', currency: 'EUR', plan: 'premium', language: 'en', created_at: 0 })
      .execute();
    await db
      .insertInto('api_keys')
      .values({
        id: 'k1',
        clinic_id: 'c1',
        name: 'K',
        key_hash: 'h1',
        hint: 'abcd',
        created_by: null,
        created_at: 0,
        expires_at: null,
        revoked_at: null,
        last_used_at: null,
        scopes: 'citas:read',
      })
      .execute();
    const u = new UsageCounter(db);
    const base = Date.UTC(2026, 5, 10, 12);
    const codes = ['invalid_parameter', 'unknown_parameter', 'too_many_requests', 'not_found', 'internal_error', 'database_error'];
    codes.forEach((code, i) =>
      u.record({
        keyId: 'k1',
        clinicId: 'c1',
        timezone: 'UTC',
        status: code.endsWith('error') ? 500 : 400,
        errorCode: code,
        atMs: base + i * 60_000,
      }),
    );
    await u.flush();
    u.record({ keyId: 'k1', clinicId: 'c1', timezone: 'UTC', status: 400, errorCode: 'invalid_parameter', atMs: base + DAY });
    const days = ['2026-06-10', '2026-06-11'];
    const s = (await u.summary('c1', days)).get('k1')!;
    expect(s.lastErrors.map((e) => e.code)).toEqual([
      'invalid_parameter',
      'database_error',
      'internal_error',
      'not_found',
      'too_many_requests',
    ]);
    expect(s.lastErrors[0]).toMatchObject({ count: 2, at: Math.floor((base + DAY) / 1000) });
    expect(s.days).toEqual([
      { day: '2026-06-10', ok: 0, errors: 6 },
      { day: '2026-06-11', ok: 0, errors: 1 },
    ]);
    expect(await u.summary('other-clinic', days)).toEqual(new Map());
  });
});
