import { describe, it, expect } from 'vitest';
import { demoCounts, generateDemo, type DemoOptions } from '../src/demo/generate.js';
import type { CitaRecord, ClientaRecord, ImportRecord, LlamadaRecord } from '../src/collections/index.js';
import { ESTADOS, RESULTADOS } from '../src/domain/records.js';
import { addDays, formatTimestamp, localDate, localToEpoch } from '../src/time.js';

const ZONE = 'Europe/Madrid';
const TODAY = '2026-03-29'; // a DST day in Madrid (clocks go 02:00 -> 03:00)
const NOW = localToEpoch(TODAY, 16, 30, ZONE);
const BASE: DemoOptions = { seed: 42, scale: 1, today: TODAY, timeZone: ZONE, nowSeconds: NOW };

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const E164_RE = /^\+[1-9]\d{7,14}$/;

function split(records: ImportRecord[]) {
  const clientas: ClientaRecord[] = [];
  const citas: CitaRecord[] = [];
  const llamadas: LlamadaRecord[] = [];
  for (const r of records) {
    if (r.type === 'clienta') clientas.push(r);
    else if (r.type === 'cita') citas.push(r);
    else llamadas.push(r);
  }
  return { clientas, citas, llamadas };
}

const run = (overrides: Partial<DemoOptions> = {}) => [...generateDemo({ ...BASE, ...overrides })];
const base = run();
const { clientas, citas, llamadas } = split(base);

/** "HH" of the local wall time and the "+HH:MM" offset, as the API would print them. */
const local = (epoch: number, zone = ZONE) => {
  const s = formatTimestamp(epoch, zone);
  return { date: s.slice(0, 10), hour: Number(s.slice(11, 13)), minute: Number(s.slice(14, 16)), offset: s.slice(19) };
};

describe('demoCounts', () => {
  it('scales 200 / 1000 / 500 per unit, rounding, at least one each', () => {
    expect(demoCounts(1)).toEqual({ clientas: 200, citas: 1000, llamadas: 500 });
    expect(demoCounts(2.5)).toEqual({ clientas: 500, citas: 2500, llamadas: 1250 });
    expect(demoCounts(0.0001)).toEqual({ clientas: 1, citas: 1, llamadas: 1 });
    expect(() => demoCounts(0)).toThrow(RangeError);
    expect(() => demoCounts(Number.NaN)).toThrow(RangeError);
  });
});

describe('generateDemo', () => {
  it('is deterministic for a seed, and a different seed gives different data', () => {
    expect(run()).toEqual(base);
    const other = run({ seed: 43 });
    expect(other).toHaveLength(base.length);
    expect(other[0]).not.toEqual(base[0]);
  });

  it('does not depend on the machine time zone', () => {
    const saved = process.env.TZ;
    try {
      for (const tz of ['Pacific/Kiritimati', 'America/Los_Angeles']) {
        process.env.TZ = tz;
        expect(run()).toEqual(base);
      }
    } finally {
      process.env.TZ = saved;
    }
  });

  it('yields the counts of demoCounts, clientas first, then citas, then llamadas', () => {
    expect({ clientas: clientas.length, citas: citas.length, llamadas: llamadas.length }).toEqual(demoCounts(1));
    const order = base.map((r) => r.type).join(',');
    expect(order).toBe(['clienta', 'cita', 'llamada'].flatMap((t, i) => Array<string>([200, 1000, 500][i]!).fill(t)).join(','));
    expect(split(run({ scale: 0.01 })).citas).toHaveLength(10);
  });

  it('uses every estado and every resultado at scale 1, for any seed', () => {
    for (let seed = 1; seed <= 20; seed++) {
      const s = split(run({ seed }));
      expect(new Set(s.citas.map((c) => c.estado))).toEqual(new Set(ESTADOS));
      expect(new Set(s.llamadas.map((l) => l.resultado))).toEqual(new Set(RESULTADOS));
    }
  });

  it('emits valid, unique UUIDs and E.164 phones, and no empty strings', () => {
    const ids = base.map((r) => r.id);
    for (const id of ids) expect(id).toMatch(UUID_RE);
    expect(new Set(ids).size).toBe(ids.length);
    for (const c of clientas) expect(c.telefono).toMatch(E164_RE);
    for (const c of clientas) expect(c.telefono).toMatch(/^\+34[67]\d{8}$/);
    expect(new Set(clientas.map((c) => c.telefono)).size).toBe(clientas.length);
    for (const l of llamadas) expect(l.telefono_caller).toMatch(E164_RE);
    for (const r of base) for (const v of Object.values(r)) if (typeof v === 'string') expect(v.trim()).not.toBe('');
  });

  it('makes realistic clientas', () => {
    for (const c of clientas) {
      expect(c.nombre.split(' ').length).toBeGreaterThanOrEqual(3);
      if (c.email !== null) expect(c.email).toMatch(/^[a-z0-9._]+@[a-z]+\.[a-z]+$/);
      expect(c.cliente_desde <= TODAY && c.cliente_desde >= addDays(TODAY, -4 * 365)).toBe(true);
      expect(localDate(c.created_at, ZONE)).toBe(c.cliente_desde);
      expect(c.created_at).toBeLessThanOrEqual(NOW);
    }
    expect(clientas.some((c) => /[áéíóúñÁÉÍÓÚÑ]/.test(c.nombre))).toBe(true);
    expect(clientas.some((c) => c.email === null)).toBe(true);
    expect(new Set(clientas.map((c) => c.idioma))).toContain('es');
    const vip = clientas.filter((c) => c.vip).length / clientas.length;
    expect(vip).toBeGreaterThan(0.02);
    expect(vip).toBeLessThan(0.2);
  });

  it('puts citas in opening hours, Monday to Saturday, from today-300 to today+65', () => {
    const ids = new Set(clientas.map((c) => c.id));
    const first = addDays(TODAY, -300);
    const last = addDays(TODAY, 65);
    for (const c of citas) {
      const t = local(c.fecha_hora);
      expect(t.date >= first && t.date <= last).toBe(true);
      expect(new Date(`${t.date}T00:00:00Z`).getUTCDay()).not.toBe(0);
      expect(t.minute % 15).toBe(0);
      expect(t.hour * 60 + t.minute).toBeGreaterThanOrEqual(9 * 60);
      expect(t.hour * 60 + t.minute + c.duracion_min).toBeLessThanOrEqual(20 * 60);
      expect(ids.has(c.clienta_id)).toBe(true);
      expect(c.created_at).toBeLessThanOrEqual(Math.min(c.fecha_hora, NOW));
      if (c.fecha_hora > NOW) expect(['pendiente', 'confirmada', 'cancelada']).toContain(c.estado);
      else expect(['completada', 'cancelada', 'no_asistio']).toContain(c.estado);
      expect(Number.isInteger(c.precio_cents) && c.precio_cents >= 0).toBe(true);
    }
    expect(citas.some((c) => c.fecha_hora > NOW)).toBe(true);
    expect(citas.filter((c) => c.notas === null).length / citas.length).toBeGreaterThan(0.5);
  });

  it('puts llamadas in the last 14 days (scale 1), never in the future, linked ones matching their clienta', () => {
    const byId = new Map(clientas.map((c) => [c.id, c]));
    const first = addDays(TODAY, -13);
    for (const l of llamadas) {
      const t = local(l.fecha_hora);
      expect(t.date >= first && t.date <= TODAY).toBe(true);
      expect(t.hour >= 8 && t.hour < 21).toBe(true);
      expect(l.created_at).toBe(l.fecha_hora + l.duracion_segundos);
      expect(l.created_at).toBeLessThanOrEqual(NOW);
      expect(l.duracion_segundos >= 20 && l.duracion_segundos <= 600).toBe(true);
      if (l.clienta_id === null) {
        expect(l.cliente_nombre).toBeNull();
        expect(clientas.some((c) => c.telefono === l.telefono_caller)).toBe(false);
      } else {
        const c = byId.get(l.clienta_id);
        expect(c).toBeDefined();
        expect(l.cliente_nombre).toBe(c!.nombre);
        expect(l.telefono_caller).toBe(c!.telefono);
      }
    }
    const linked = llamadas.filter((l) => l.clienta_id !== null).length / llamadas.length;
    expect(linked).toBeGreaterThan(0.7);
    expect(linked).toBeLessThan(0.9);
  });

  it('gets DST right in Madrid on 2026-03-29 (a Sunday: no citas, but calls)', () => {
    const { citas: cs, llamadas: ls } = split(run({ scale: 3 }));
    expect(cs.filter((c) => local(c.fecha_hora).date === TODAY)).toHaveLength(0);
    const before = cs.filter((c) => local(c.fecha_hora).date === '2026-03-28');
    const after = cs.filter((c) => local(c.fecha_hora).date === '2026-03-30');
    expect(before.length).toBeGreaterThan(0);
    expect(after.length).toBeGreaterThan(0);
    for (const c of before) expect(local(c.fecha_hora).offset).toBe('+01:00');
    for (const c of after) expect(local(c.fecha_hora).offset).toBe('+02:00');
    const onDay = ls.filter((l) => local(l.fecha_hora).date === TODAY);
    expect(onDay.length).toBeGreaterThan(0);
    for (const l of onDay) {
      const t = local(l.fecha_hora);
      expect(t.offset).toBe('+02:00');
      expect(t.hour >= 8 && t.hour < 21).toBe(true);
    }
  });

  it('gets DST right on a working day: Cairo skips midnight on Friday 2026-04-24', () => {
    const zone = 'Africa/Cairo';
    const today = '2026-04-24';
    const { citas: cs } = split(run({ scale: 10, timeZone: zone, today, nowSeconds: localToEpoch(today, 12, 0, zone) }));
    const onDay = cs.filter((c) => local(c.fecha_hora, zone).date === today);
    expect(onDay.length).toBeGreaterThan(0);
    for (const c of onDay) {
      const t = local(c.fecha_hora, zone);
      expect(t.offset).toBe('+03:00');
      expect(t.hour >= 9 && t.hour < 20).toBe(true);
      expect(t.hour * 60 + t.minute + c.duracion_min).toBeLessThanOrEqual(20 * 60);
    }
    // Midnight + minutes would start the day at 01:00 and shift every cita an hour later.
    expect(onDay.some((c) => local(c.fecha_hora, zone).hour === 9)).toBe(true);
  });
});
