// Test mode: a test key reads its clinic's sandbox only, a live key live data only, on every
// surface (lists, single records, the feed, CSV, /mcp), on both databases; /me says which; the
// sandbox holds synthetic data only, refuses imports, moves on its own (driven here by the test
// clock, not by waiting) and a reset expires every cursor of its feed.
import { Readable } from 'node:stream';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { isFictionalPhone } from '../../src/demo/fictional.js';
import { getClinic } from '../../src/repos/clinics.js';
import { deleteClinic } from '../../src/services/clinic-deletion.js';
import { importJsonLines } from '../../src/services/import.js';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { dialects } from '../helpers/db.js';
import { callOk, connect, listen } from '../mcp/helpers.js';
import { call, expectError, ME_PATH, ok, tick } from './helpers.js';

/** Wide enough for every cita and call of both data sets. */
const ALL_TIME = 'desde=2024-01-01&hasta=2027-12-31';
const LISTS = [
  ['/api/v1/citas', 'citas', ALL_TIME],
  ['/api/v1/clientas', 'clientas', ''],
  ['/api/v1/llamadas', 'llamadas', ALL_TIME],
] as const;

describe.each(dialects())('test mode on %s', (dialect) => {
  let t: TestApp;
  let testKey: string;
  let sandboxId: string;
  beforeAll(async () => {
    t = await buildTestApp(dialect);
    const issued = await t.keys.create({ clinicId: t.clinicA.id, name: 'Sandbox', expiresAt: null, createdBy: null, mode: 'test' });
    testKey = issued.key;
    sandboxId = (await t.rt.sandboxes.find(t.clinicA.id))!;
  });
  afterAll(async () => {
    await t?.close();
  });
  beforeEach(() => tick(t));

  /** Every id a key sees on one list, paging through it. */
  const idsOf = async (key: string, path: string, field: string, query: string) => {
    const seen: string[] = [];
    for (let offset = 0; ; offset += 500) {
      const body = await ok(t, `${path}?limit=500&offset=${offset}${query ? `&${query}` : ''}`, { key });
      seen.push(...(body[field] as { id: string }[]).map((r) => r.id));
      if (seen.length >= body.total) return seen;
    }
  };

  it('makes a test key <prefix>_test_..., and the sandbox with it, a clinic row of its own', async () => {
    expect(testKey).toMatch(/^svc_test_[A-Za-z0-9_-]{43}$/);
    expect(t.keyA).not.toMatch(/_test_/);
    expect(sandboxId).not.toBeNull();
    expect(sandboxId).not.toBe(t.clinicA.id);
    // Listed with the clinic's keys, with its mode.
    const listed = await t.keys.list(t.clinicA.id);
    expect(listed.find((k) => k.name === 'Sandbox')!.mode).toBe('test');
    expect(listed.find((k) => k.name === 'A')!.mode).toBe('live');
    // Clinic B has no sandbox: none is made for clinics that do not use test mode.
    expect(await t.rt.sandboxes.find(t.clinicB.id)).toBeNull();
  });

  it('a rolled test key is a test key too', async () => {
    const k = await t.keys.create({ clinicId: t.clinicA.id, name: 'Roll me', expiresAt: null, createdBy: null, mode: 'test' });
    const rolled = (await t.keys.roll(t.clinicA.id, k.id, 0, null))!;
    expect(rolled.issued.key).toMatch(/^svc_test_/);
    expect(rolled.issued.mode).toBe('test');
    expect((await ok(t, ME_PATH, { key: rolled.issued.key })).modo).toBe('test');
  });

  it('/me answers modo test or live, naming the live clinic either way', async () => {
    const test = await ok(t, ME_PATH, { key: testKey });
    const live = await ok(t, ME_PATH, { key: t.keyA });
    expect(test.modo).toBe('test');
    expect(live.modo).toBe('live');
    expect(test.clinica).toEqual(live.clinica);
    expect(JSON.stringify(test)).not.toContain(sandboxId);
  });

  it('lists: a test key sees only synthetic sandbox data, a live key none of it', async () => {
    for (const [path, field, query] of LISTS) {
      const test = await idsOf(testKey, path, field, query);
      const live = await idsOf(t.keyA, path, field, query);
      expect(test.length, path).toBeGreaterThan(0);
      expect(live.length, path).toBeGreaterThan(0);
      expect(
        test.filter((id) => live.includes(id)),
        path,
      ).toEqual([]);
    }
    const clientas = (await ok(t, '/api/v1/clientas?limit=500', { key: testKey })).clientas as { telefono: string; email: string | null }[];
    for (const c of clientas) {
      expect(isFictionalPhone(c.telefono), c.telefono).toBe(true);
      if (c.email !== null) expect(c.email).toMatch(/@example\.com$/);
    }
    const llamadas = (await ok(t, `/api/v1/llamadas?limit=500&${ALL_TIME}`, { key: testKey })).llamadas as { telefono_caller: string }[];
    for (const l of llamadas) expect(isFictionalPhone(l.telefono_caller), l.telefono_caller).toBe(true);
  });

  it("single records: each key's own are found, the other mode's are 404 not_found", async () => {
    for (const [path, field, query] of LISTS) {
      const testId = (await ok(t, `${path}?limit=1${query ? `&${query}` : ''}`, { key: testKey }))[field][0].id as string;
      const liveId = (await ok(t, `${path}?limit=1${query ? `&${query}` : ''}`, { key: t.keyA }))[field][0].id as string;
      expect((await ok(t, `${path}/${testId}`, { key: testKey })).id).toBe(testId);
      expect((await ok(t, `${path}/${liveId}`, { key: t.keyA })).id).toBe(liveId);
      expectError(await call(t, `${path}/${liveId}`, { key: testKey }), 404, 'not_found');
      expectError(await call(t, `${path}/${testId}`, { key: t.keyA }), 404, 'not_found');
    }
  });

  it('CSV: the same separation', async () => {
    const liveIds = await idsOf(t.keyA, '/api/v1/clientas', 'clientas', '');
    const testIds = await idsOf(testKey, '/api/v1/clientas', 'clientas', '');
    const csv = async (key: string) => {
      const res = await call(t, '/api/v1/clientas?limit=500', { key, headers: { accept: 'text/csv' } });
      expect(res.statusCode).toBe(200);
      return res.body;
    };
    const testCsv = await csv(testKey);
    const liveCsv = await csv(t.keyA);
    for (const id of liveIds) expect(testCsv).not.toContain(id);
    for (const id of testIds) expect(liveCsv).not.toContain(id);
    expect(testCsv).toContain(testIds[0]);
  });

  it("the sandbox moves through the write path: its events reach the test key's feed only", async () => {
    const liveFeed = async () => JSON.stringify(await ok(t, '/api/v1/eventos?limit=500', { key: t.keyA }));
    const liveBefore = await liveFeed();
    const from = (await ok(t, '/api/v1/eventos?cursor=now', { key: testKey })).next_cursor as string;
    // Three moves, a minute apart on the test clock.
    for (let i = 0; i < 3; i++) {
      tick(t, 60_000);
      expect(await t.rt.sandboxes.moveAll()).toEqual({ moved: 1, busy: 0 });
    }
    const page = await ok(t, `/api/v1/eventos?cursor=${from}&limit=500`, { key: testKey });
    const tipos = new Set((page.eventos as { tipo: string }[]).map((e) => e.tipo));
    expect(tipos.has('cita.creada')).toBe(true);
    expect(tipos.has('llamada.creada')).toBe(true);
    expect(tipos.has('cita.actualizada')).toBe(true);
    // Nothing of it in the live feed, and none of the live events in the sandbox's.
    expect(await liveFeed()).toBe(liveBefore);
    const sandboxIds = new Set((page.eventos as { datos: { id: string } }[]).map((e) => e.datos.id));
    for (const id of await idsOf(t.keyA, '/api/v1/citas', 'citas', ALL_TIME)) expect(sandboxIds.has(id)).toBe(false);
    const allTest = JSON.stringify(await ok(t, '/api/v1/eventos?limit=500', { key: testKey }));
    for (const id of await idsOf(t.keyA, '/api/v1/clientas', 'clientas', '')) expect(allTest).not.toContain(id);
    // A cursor of one mode is another clinic's to the other.
    expectError(await call(t, `/api/v1/eventos?cursor=${from}`, { key: t.keyA }), 400, 'invalid_parameter', 'cursor');
  });

  it('/mcp: the tools answer from the sandbox for a test key, from live data for a live key', async () => {
    const url = await listen(t);
    const test = await connect(url, testKey);
    const live = await connect(url, t.keyA);
    try {
      const testIds = await idsOf(testKey, '/api/v1/clientas', 'clientas', '');
      const liveIds = await idsOf(t.keyA, '/api/v1/clientas', 'clientas', '');
      const viaTest = (await callOk(test, 'list_clientas', { limit: 500 })).structured.clientas.map((c: { id: string }) => c.id);
      const viaLive = (await callOk(live, 'list_clientas', { limit: 500 })).structured.clientas.map((c: { id: string }) => c.id);
      expect(viaTest).toEqual(testIds);
      expect(viaLive).toEqual(liveIds);
      const clinic = await callOk(test, 'get_clinic');
      expect(clinic.structured.modo).toBe('test');
      expect(clinic.text).toContain('Test mode');
      expect((await callOk(live, 'get_clinic')).text).not.toContain('Test mode');
      const events = JSON.stringify((await callOk(test, 'list_eventos', { limit: 500 })).structured);
      for (const id of liveIds) expect(events).not.toContain(id);
      const got = await test.callTool({ name: 'get_clienta', arguments: { id: liveIds[0] } });
      expect(got.isError).toBe(true);
    } finally {
      await test.close();
      await live.close();
    }
  });

  it('refuses an import into the sandbox, saying which clinic to use', async () => {
    const line = JSON.stringify({ type: 'cita', id: '00000000-0000-4000-8000-000000000001', deleted: true });
    await expect(importJsonLines(t.database, sandboxId, Readable.from([line]))).rejects.toThrow(
      new RegExp(`sandbox of clinic ${t.clinicA.id}.*nothing can be imported`),
    );
  });

  it("a reset gives fresh data; the feed's earlier cursors are 410 cursor_expired, and the feed starts again", async () => {
    const before = await idsOf(testKey, '/api/v1/clientas', 'clientas', '');
    const cursor = (await ok(t, '/api/v1/eventos?cursor=now', { key: testKey })).next_cursor as string;
    const older = (await ok(t, '/api/v1/eventos?limit=1', { key: testKey })).next_cursor as string;
    tick(t, 60_000);
    const out = await t.rt.sandboxes.reset(t.clinicA.id);
    expect(out.sandboxId).toBe(sandboxId);
    tick(t);
    const after = await idsOf(testKey, '/api/v1/clientas', 'clientas', '');
    expect(after.length).toBeGreaterThan(0);
    expect(after.filter((id) => before.includes(id))).toEqual([]);
    expectError(await call(t, `/api/v1/eventos?cursor=${cursor}`, { key: testKey }), 410, 'cursor_expired');
    expectError(await call(t, `/api/v1/eventos?cursor=${older}`, { key: testKey }), 410, 'cursor_expired');
    // Starting again from now follows the moves after the reset.
    const now = (await ok(t, '/api/v1/eventos?cursor=now', { key: testKey })).next_cursor as string;
    tick(t, 60_000);
    await t.rt.sandboxes.moveAll();
    const page = await ok(t, `/api/v1/eventos?cursor=${now}`, { key: testKey });
    expect(page.eventos.length).toBeGreaterThan(0);
    // The live clinic's data is untouched.
    expect((await ok(t, '/api/v1/clientas', { key: t.keyA })).total).toBeGreaterThan(0);
  });

  it('deleting the clinic deletes its sandbox too; a sandbox is not deleted on its own', async () => {
    await expect(deleteClinic(t.database, t.keys, sandboxId, 'x')).rejects.toThrow(/sandbox of clinic/);
    await deleteClinic(t.database, t.keys, t.clinicA.id, t.clinicA.name);
    expect(await getClinic(t.database.db, sandboxId)).toBeUndefined();
    expect(await t.database.db.selectFrom('citas').select('id').where('clinic_id', '=', sandboxId).execute()).toEqual([]);
    expectError(await call(t, ME_PATH, { key: testKey }), 401, 'invalid_api_key');
  });
});
