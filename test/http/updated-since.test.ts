// updated_since on the three lists (docs/api.md, "Keep a mirror in sync"): the records changed at or
// after a time, ordered by updated_at then id, without the default date windows (an explicit
// desde/hasta and the other filters still apply), totals included.
import { Readable } from 'node:stream';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { importJsonLines } from '../../src/services/import.js';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { dialects } from '../helpers/db.js';
import { A, citasA, uid } from '../helpers/fixtures.js';
import { call, expectError, ok, tick } from './helpers.js';

interface Item {
  id: string;
  updated_at: string;
  [k: string]: unknown;
}

const SEEDED = '2026-03-28T13:00:00+01:00';
const LATER_MS = Date.UTC(2026, 2, 28, 15, 0, 0); // 16:00 in Madrid

describe.each(dialects())('updated_since on %s', (dialect) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildTestApp(dialect);
    // Three hours after the fixtures: Mario's cita of this morning is cancelled, María is renamed
    // (her five citas and her linked call change with her), Ángela is deleted (her three citas
    // go, her call is unlinked).
    t.clock.now = LATER_MS;
    const lines = [
      {
        type: 'cita',
        id: citasA.todayMorningTwin!.id,
        clienta_id: A.mario,
        fecha_hora: '2026-03-28T09:00:00+01:00',
        servicio: 'Limpieza facial',
        duracion_min: 60,
        precio: 55.5,
        estado: 'cancelada',
        profesional_nombre: 'Laura Martín',
        sede_nombre: 'Sede Centro',
        created_at: '2026-03-01T09:00:00+01:00',
      },
      {
        type: 'clienta',
        id: A.maria,
        nombre: 'María José Núñez Ruiz',
        telefono: '+34600123456',
        email: 'mj@example.com',
        idioma: 'es',
        vip: true,
        cliente_desde: '2024-05-10',
        created_at: '2024-05-10T10:00:00+02:00',
      },
      { type: 'clienta', id: A.angela, deleted: true },
    ].map((l) => JSON.stringify(l));
    const res = await importJsonLines(t.database, t.clinicA.id, Readable.from([lines.join('\n')]), { now: () => t.clock.now });
    expect(res.ok, JSON.stringify(res.errors)).toBe(true);
  });
  afterAll(async () => {
    await t.close();
  });
  beforeEach(() => tick(t));

  const list =
    <K extends string>(path: string, _key: K) =>
    async (query: string) => {
      const body = await ok<Record<K, Item[]> & { total: number; rango?: unknown; desde?: unknown; hasta?: unknown }>(
        t,
        `${path}?${query}`,
      );
      return body;
    };
  const citas = list('/api/v1/citas', 'citas');
  const clientas = list('/api/v1/clientas', 'clientas');
  const llamadas = list('/api/v1/llamadas', 'llamadas');
  const sorted = (rows: Item[]) => [...rows].sort((a, b) => a.updated_at.localeCompare(b.updated_at) || a.id.localeCompare(b.id));
  const since = encodeURIComponent('2026-03-28T16:00:00+01:00');

  it('citas: those changed since, by updated_at then id, with no default window (all days), totals to match', async () => {
    const all = await citas('updated_since=2000-01-01T00:00:00Z&limit=500');
    expect(all.total).toBe(10); // 13 fixtures, Ángela's 3 deleted
    expect(all.citas.map((c) => c.id)).toEqual(sorted(all.citas).map((c) => c.id));
    expect(all.rango).toEqual({ desde: null, hasta: null });
    // Changed since 16:00: Mario's cancelled cita and María's five (her new name); Ángela's are gone.
    const changed = await citas(`updated_since=${since}`);
    expect(changed.citas.map((c) => c.cliente_nombre).sort()).toEqual([...Array(5).fill('María José Núñez Ruiz'), 'Mario Pérez'].sort());
    expect(changed.total).toBe(6);
    expect(changed.citas.every((c) => c.updated_at === '2026-03-28T16:00:00+01:00')).toBe(true);
    // Inclusive at the instant; a second later there is nothing.
    expect((await citas('updated_since=2026-03-28T15:00:01Z')).total).toBe(0);
    // Paging in that order.
    const page2 = await citas(`updated_since=${since}&limit=2&offset=2`);
    expect(page2.citas.map((c) => c.id)).toEqual(changed.citas.slice(2, 4).map((c) => c.id));
  });

  it('citas: an explicit desde/hasta and estado still apply', async () => {
    const q = await citas(`updated_since=${since}&desde=2026-03-29&hasta=2026-03-31`);
    expect(q.citas.map((c) => c.fecha_hora)).toEqual(['2026-03-29T03:00:00+02:00']);
    expect(q.rango).toEqual({ desde: '2026-03-29', hasta: '2026-03-31' });
    const from = await citas(`updated_since=${since}&desde=2026-04-01`);
    expect(from.citas.map((c) => c.fecha_hora).sort()).toEqual(['2026-04-27T20:00:00+02:00', '2026-04-28T09:00:00+02:00']);
    expect(from.rango).toEqual({ desde: '2026-04-01', hasta: null });
    expect((await citas(`updated_since=${since}&estado=completada`)).citas.map((c) => c.fecha_hora)).toEqual(['2026-03-29T03:00:00+02:00']);
    expectError(await call(t, `/api/v1/citas?updated_since=${since}&desde=2026-04-02&hasta=2026-04-01`), 400, 'invalid_parameter', 'desde');
  });

  it('clientas: those changed since (a deleted one is gone), with vip and q', async () => {
    const all = await clientas('updated_since=2000-01-01T00:00:00Z');
    expect(all.total).toBe(4);
    expect(all.clientas.map((c) => c.id)).toEqual(sorted(all.clientas).map((c) => c.id));
    expect(all.clientas.at(-1)).toMatchObject({
      id: A.maria,
      nombre: 'María José Núñez Ruiz',
      updated_at: '2026-03-28T16:00:00+01:00',
      total_citas: 5,
    });
    expect((await clientas(`updated_since=${since}`)).clientas.map((c) => c.id)).toEqual([A.maria]);
    const vip = await clientas(`updated_since=${encodeURIComponent(SEEDED)}&vip=true&q=maria`);
    expect(vip.clientas.map((c) => c.id)).toEqual([A.mariaLopez, A.maria]);
    expect(vip.total).toBe(2);
    expect((await clientas(`updated_since=${since}&q=lopez`)).total).toBe(0);
  });

  it('llamadas: those changed since, by updated_at then id; the unlinked call of a deleted clienta too', async () => {
    const all = await llamadas('updated_since=2000-01-01T00:00:00Z');
    expect(all.total).toBe(5);
    expect([all.desde, all.hasta]).toEqual([null, null]);
    expect(all.llamadas.map((l) => l.id)).toEqual(sorted(all.llamadas).map((l) => l.id));
    const changed = await llamadas(`updated_since=${since}`);
    expect(changed.llamadas.map((l) => [l.id, l.cliente_nombre])).toEqual([
      [uid('a', 3, 1), 'María José Núñez Ruiz'],
      [uid('a', 3, 5), null],
    ]);
    const window = await llamadas(`updated_since=${since}&desde=2026-03-26&resultado=agendada`);
    expect(window.llamadas.map((l) => l.id)).toEqual([uid('a', 3, 1)]);
    expect([window.desde, window.hasta]).toEqual(['2026-03-26', null]);
    const upTo = await llamadas(`updated_since=${since}&hasta=2026-03-25`);
    expect(upTo.llamadas.map((l) => l.id)).toEqual([uid('a', 3, 5)]);
    expect([upTo.desde, upTo.hasta]).toEqual([null, '2026-03-25']);
    expectError(
      await call(t, `/api/v1/llamadas?updated_since=${since}&desde=2026-04-02&hasta=2026-04-01`),
      400,
      'invalid_parameter',
      'desde',
    );
  });

  it.each(['/api/v1/citas', '/api/v1/clientas', '/api/v1/llamadas'])(
    '%s: updated_since must be an RFC 3339 timestamp with an offset',
    async (path) => {
      for (const bad of ['2026-03-28', '2026-03-28T16:00:00', 'yesterday', '2026-02-30T10:00:00Z', '1711641600']) {
        const err = expectError(await call(t, `${path}?updated_since=${bad}`), 400, 'invalid_parameter', 'updated_since');
        expect(err.message).toContain('RFC 3339');
      }
      // "+01:00" sent raw reads as " 01:00": the message says how to send it.
      const plus = expectError(await call(t, `${path}?updated_since=2026-03-28T16:00:00+01:00`), 400, 'invalid_parameter', 'updated_since');
      expect(plus.message).toContain('%2B');
      expectError(await call(t, `${path}?updated_since=${since}&updated_since=${since}`), 400, 'invalid_parameter', 'updated_since');
    },
  );
});
