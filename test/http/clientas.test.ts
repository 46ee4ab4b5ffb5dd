// GET /api/v1/clientas: fields, derived fields, ordering, search (q), vip, paging, isolation.
// Now is 2026-03-28T12:00Z (13:00 in Madrid).
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { appFor, bearer, buildTestApp, seedRecords, type TestApp } from '../helpers/app.js';
import { anotherInstance } from '../helpers/runtime.js';
import { dialects } from '../helpers/db.js';
import { A, B, clientaRecord, uid } from '../helpers/fixtures.js';
import { ids, ok, tick } from './helpers.js';

interface Clienta {
  id: string;
  nombre: string;
  ultima_cita: string | null;
}
interface ClientasBody {
  clientas: Clienta[];
  total: number;
  limit: number;
  offset: number;
}

const pct = {
  id: A.pct,
  nombre: 'Ana 100%_Ruiz',
  telefono: '+34633444555',
  email: null,
  idioma: 'es',
  vip: false,
  total_citas: 0,
  total_llamadas: 0,
  ultima_cita: null,
  ultima_llamada: null,
  cliente_desde: '2024-05-10',
  created_at: '2024-05-10T10:00:00+02:00',
  updated_at: '2026-03-28T13:00:00+01:00',
};
const angela = {
  id: A.angela,
  nombre: 'Ángela Ibáñez',
  telefono: '+34699887766',
  email: null,
  idioma: null,
  vip: false,
  // citas 2026-02-10 (past), 2026-03-29 and 2026-03-30 (future: not ultima_cita)
  total_citas: 3,
  total_llamadas: 1,
  ultima_cita: '2026-02-10',
  ultima_llamada: '2026-03-25T10:00:00+01:00',
  cliente_desde: '2024-05-10',
  created_at: '2024-05-10T10:00:00+02:00',
  updated_at: '2026-03-28T13:00:00+01:00',
};
const maria = {
  id: A.maria,
  nombre: 'María José Núñez',
  telefono: '+34600123456',
  email: 'mj@example.com',
  idioma: 'es',
  vip: true,
  // five citas, every status counted; latest at or before now is today's 09:00
  total_citas: 5,
  total_llamadas: 1,
  ultima_cita: '2026-03-28',
  ultima_llamada: '2026-03-28T12:30:00+01:00',
  cliente_desde: '2024-05-10',
  created_at: '2024-05-10T10:00:00+02:00',
  updated_at: '2026-03-28T13:00:00+01:00',
};
const mariaLopez = {
  id: A.mariaLopez,
  nombre: 'maria lopez',
  telefono: '+34622000111',
  email: null,
  idioma: 'es',
  vip: true,
  total_citas: 0,
  total_llamadas: 0,
  ultima_cita: null,
  ultima_llamada: null,
  cliente_desde: '2024-05-10',
  created_at: '2024-05-10T10:00:00+02:00',
  updated_at: '2026-03-28T13:00:00+01:00',
};
const mario = {
  id: A.mario,
  nombre: 'Mario Pérez',
  telefono: '+34611222333',
  email: null,
  idioma: 'en',
  vip: false,
  // two linked calls, one of them (2026-03-20) older than the llamadas default window
  total_citas: 5,
  total_llamadas: 2,
  ultima_cita: '2026-03-28',
  ultima_llamada: '2026-03-21T00:00:00+01:00',
  cliente_desde: '2024-05-10',
  created_at: '2024-05-10T10:00:00+02:00',
  updated_at: '2026-03-28T13:00:00+01:00',
};
// By name without case or accents: "ana 100%_ruiz" < "angela ibanez" < "maria jose nunez" < "maria lopez" < "mario perez".
const ALL = [pct, angela, maria, mariaLopez, mario];
const ALL_IDS = ALL.map((c) => c.id);

const mariaB = {
  id: B.maria,
  nombre: 'María Fernández',
  telefono: '+525512345678',
  email: null,
  idioma: 'es',
  vip: true,
  // both of B's citas start after now (10:00 in Mexico City = 16:00Z): no ultima_cita yet
  total_citas: 2,
  total_llamadas: 1,
  ultima_cita: null,
  ultima_llamada: '2026-03-27T10:00:00-06:00',
  cliente_desde: '2024-05-10',
  created_at: '2024-05-10T02:00:00-06:00',
  updated_at: '2026-03-28T06:00:00-06:00',
};

describe.each(dialects())('GET /api/v1/clientas on %s', (dialect) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildTestApp(dialect);
  });
  afterAll(async () => {
    await t.close();
  });
  beforeEach(() => tick(t));

  const clientas = (qs = '', key?: string) => ok<ClientasBody>(t, `/api/v1/clientas${qs ? `?${qs}` : ''}`, { key });
  const search = async (q: string, extra = '') => clientas(`q=${encodeURIComponent(q)}${extra}`);

  it('lists every clienta with exact fields, types and derived values, ordered by name', async () => {
    const body = await clientas();
    expect(Object.keys(body).sort()).toEqual(['clientas', 'limit', 'offset', 'total']);
    expect(body.clientas).toStrictEqual(ALL);
    expect(body.total).toBe(5);
    expect(body.limit).toBe(200);
    expect(body.offset).toBe(0);
  });

  it('orders case- and accent-insensitively, then by id', async () => {
    // "Ángela" sorts as "angela" (before "María"), "maria lopez" between "María José" and "Mario".
    expect((await clientas()).clientas.map((c) => c.nombre)).toEqual([
      'Ana 100%_Ruiz',
      'Ángela Ibáñez',
      'María José Núñez',
      'maria lopez',
      'Mario Pérez',
    ]);
  });

  it('q matches names without case or accents', async () => {
    const cases: [string, string[]][] = [
      ['maria', [A.maria, A.mariaLopez]],
      ['MARÍA', [A.maria, A.mariaLopez]],
      ['María', [A.maria, A.mariaLopez]],
      ['mari', [A.maria, A.mariaLopez, A.mario]],
      ['ibanez', [A.angela]],
      ['IBÁÑEZ', [A.angela]],
      ['josé núñez', [A.maria]],
      ['pérez', [A.mario]],
      ['zzz', []],
    ];
    for (const [q, expected] of cases) {
      const body = await search(q);
      expect(ids(body.clientas), q).toEqual(expected);
      expect(body.total, q).toBe(expected.length);
    }
  });

  it("q matches the phone's digits, whatever the punctuation", async () => {
    for (const q of ['600 12', '+34 600', '+34600123456', '600-123-456']) {
      const body = await search(q);
      expect(ids(body.clientas), q).toEqual([A.maria]);
      expect(body.total, q).toBe(1);
    }
    expect(ids((await search('699 887')).clientas)).toEqual([A.angela]);
    // every clienta of A has a +34 number
    const all34 = await search('34');
    expect(ids(all34.clientas)).toEqual(ALL_IDS);
    expect(all34.total).toBe(5);
  });

  it('q treats LIKE wildcards (% and _) literally', async () => {
    for (const q of ['%', '_', '100%_', '%_R']) {
      const body = await search(q);
      expect(ids(body.clientas), q).toEqual([A.pct]);
      expect(body.total, q).toBe(1);
    }
    // as a wildcard "a%" would match every name holding an "a"; literally, none has it
    const none = await search('a%');
    expect(none.clientas).toEqual([]);
    expect(none.total).toBe(0);
  });

  it('vip=true returns VIP clientas only, vip=false non-VIP only', async () => {
    const vip = await clientas('vip=true');
    expect(ids(vip.clientas)).toEqual([A.maria, A.mariaLopez]);
    expect(vip.total).toBe(2);
    const nonVip = await clientas('vip=false');
    expect(ids(nonVip.clientas)).toEqual([A.pct, A.angela, A.mario]);
    expect(nonVip.total).toBe(3);
  });

  it('combines q, vip, limit and offset, with total ignoring limit/offset', async () => {
    const a = await search('mari', '&vip=false');
    expect(ids(a.clientas)).toEqual([A.mario]);
    expect(a.total).toBe(1);
    const b = await search('maria', '&vip=false');
    expect([b.clientas, b.total]).toEqual([[], 0]);
    const c = await search('mari', '&limit=1&offset=1');
    expect(ids(c.clientas)).toEqual([A.mariaLopez]);
    expect([c.total, c.limit, c.offset]).toEqual([3, 1, 1]);
  });

  it('pages through with limit=2 without repeats or gaps', async () => {
    const seen: string[] = [];
    for (const offset of [0, 2, 4]) {
      const page = await clientas(`limit=2&offset=${offset}`);
      expect([page.total, page.limit, page.offset]).toEqual([5, 2, offset]);
      seen.push(...ids(page.clientas));
    }
    expect(seen).toEqual(ALL_IDS);
    const beyond = await clientas('offset=5');
    expect([beyond.clientas, beyond.total]).toEqual([[], 5]);
  });

  it("isolates clinics: B's María Fernández never shows for A, A's clientas never for B", async () => {
    const fromA = await search('fernández');
    expect([fromA.clientas, fromA.total]).toEqual([[], 0]);
    expect(ids((await search('5512')).clientas)).toEqual([]);

    const fromB = await clientas('', t.keyB);
    expect(fromB.clientas).toStrictEqual([mariaB]);
    expect(fromB.total).toBe(1);
    const bMaria = await clientas('q=maria', t.keyB);
    expect(ids(bMaria.clientas)).toEqual([B.maria]);
    const bVip = await clientas('vip=false', t.keyB);
    expect([bVip.clientas, bVip.total]).toEqual([[], 0]);
  });
});

describe.each(dialects())('GET /api/v1/clientas, own data and clock, on %s', (dialect) => {
  it('ultima_cita counts a cita starting exactly now, as its local date in the clinic zone', async () => {
    // Ángela's cita at 2026-03-29T00:30+01:00 (fixture dstDayEarly) is 2026-03-28T23:30Z: a UTC date of the 28th.
    const citaMs = Date.UTC(2026, 2, 28, 23, 30);
    const t = await buildTestApp(dialect, { nowMs: citaMs - 1000 });
    try {
      const angelaNow = async () => (await ok<ClientasBody>(t, '/api/v1/clientas?q=angela')).clientas[0]!;
      expect((await angelaNow()).ultima_cita).toBe('2026-02-10');
      t.clock.now = citaMs;
      expect((await angelaNow()).ultima_cita).toBe('2026-03-29');
    } finally {
      await t.close();
    }
  });

  it('orders equal names by id, and counts new clientas', async () => {
    const t = await buildTestApp(dialect);
    try {
      const [z1, z2, z3] = [uid('a', 1, 901), uid('a', 1, 902), uid('a', 1, 903)];
      await seedRecords(t.database, t.clinicA, [
        clientaRecord(z3, 'Zoé Ruiz', '+34644000003'),
        clientaRecord(z1, 'ZOE RUIZ', '+34644000001', { vip: true }),
        clientaRecord(z2, 'zoe ruiz', '+34644000002'),
      ]);
      const body = await ok<ClientasBody>(t, '/api/v1/clientas?q=zoe');
      expect(ids(body.clientas)).toEqual([z1, z2, z3]);
      expect(body.total).toBe(3);
      const page = await ok<ClientasBody>(t, '/api/v1/clientas?limit=2&offset=5');
      expect(ids(page.clientas)).toEqual([z1, z2]);
      expect(page.total).toBe(8);
      expect((await ok<ClientasBody>(t, '/api/v1/clientas?vip=true')).total).toBe(3);
      expect((await ok<ClientasBody>(t, '/api/v1/clientas', { key: t.keyB })).total).toBe(1);
    } finally {
      await t.close();
    }
  });

  it('a search total is kept until the clinic imports clientas, then counted again (any instance, per clinic)', async () => {
    const t = await buildTestApp(dialect);
    // A second app on the same database: another instance of the service with its own cache.
    const otherRt = anotherInstance(t.rt);
    const other = await appFor(otherRt);
    try {
      const total = async (url: string, key = t.keyA, app = t.app) => {
        const res = await app.inject({ method: 'GET', url, headers: bearer(key) });
        expect(res.statusCode, res.body).toBe(200);
        return (res.json() as ClientasBody).total;
      };
      expect(await total('/api/v1/clientas?q=mari')).toBe(3);
      expect(await total('/api/v1/clientas?q=mari', t.keyA, other)).toBe(3);
      expect(await total('/api/v1/clientas?q=mari', t.keyB)).toBe(1);
      expect(await total('/api/v1/clientas?q=mari&vip=true')).toBe(2);

      // Clinic A imports two new Marías and renames Mario: both instances see it at once.
      await seedRecords(t.database, t.clinicA, [
        clientaRecord(uid('a', 1, 950), 'Marina Soto', '+34644000950', { vip: true }),
        clientaRecord(uid('a', 1, 951), 'Mariela Gil', '+34644000951'),
        clientaRecord(A.mario, 'Dario Pérez', '+34611222333'),
      ]);
      expect(await total('/api/v1/clientas?q=mari')).toBe(4);
      expect(await total('/api/v1/clientas?q=mari', t.keyA, other)).toBe(4);
      expect(await total('/api/v1/clientas?q=dario')).toBe(1);
      expect(await total('/api/v1/clientas?q=mari&vip=true')).toBe(3);
      // Clinic B's total was not touched by A's import, and a B import changes only B's.
      expect(await total('/api/v1/clientas?q=mari', t.keyB)).toBe(1);
      await seedRecords(t.database, t.clinicB, [clientaRecord(uid('b', 1, 950), 'Mariana Ruiz', '+525512340950')]);
      expect(await total('/api/v1/clientas?q=mari', t.keyB)).toBe(2);
      expect(await total('/api/v1/clientas?q=mari')).toBe(4);
    } finally {
      await other.close();
      await otherRt.close();
      await t.close();
    }
  });
});
