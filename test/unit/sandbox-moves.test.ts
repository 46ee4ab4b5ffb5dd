// The sandbox's data and moves, as pure functions: the demo made fictional (every phone in a range
// reserved for fiction, every e-mail at example.com, calls still linked by number), and one move
// of a sandbox: new bookings and calls, bookings moved on, and, past the bounds, the oldest
// records deleted so that the sandbox never grows.
import { describe, expect, it } from 'vitest';
import { fictional, isFictionalPhone } from '../../src/demo/fictional.js';
import { generateDemo } from '../../src/demo/generate.js';
import { SANDBOX_BOUNDS, sandboxMove, type SandboxState } from '../../src/demo/sandbox-moves.js';
import type { CitaRecord } from '../../src/collections/index.js';
import type { ImportRecord } from '../../src/domain/records.js';

const NOW_S = Date.UTC(2026, 2, 28, 12) / 1000;

describe('fictional demo data', () => {
  const records = [...fictional(generateDemo({ seed: 7, scale: 0.25, today: '2026-03-28', timeZone: 'Europe/Madrid', nowSeconds: NOW_S }))];

  it('has fictional phones and example.com e-mails only, with realistic names', () => {
    for (const r of records) {
      if (r.type === 'clienta') {
        expect(isFictionalPhone(r.telefono), r.telefono).toBe(true);
        if (r.email !== null) expect(r.email).toMatch(/^[^@]+@example\.com$/);
        expect(r.nombre).toMatch(/^\p{Lu}\p{Ll}+( \p{L}+)+$/u);
      }
      if (r.type === 'llamada') expect(isFictionalPhone(r.telefono_caller), r.telefono_caller).toBe(true);
    }
  });

  it("keeps a clienta's calls on her (new) number", () => {
    const phoneOf = new Map(records.flatMap((r) => (r.type === 'clienta' ? [[r.id, r.telefono] as const] : [])));
    const linked = records.filter((r): r is ImportRecord & { type: 'llamada' } => r.type === 'llamada' && r.clienta_id !== null);
    expect(linked.length).toBeGreaterThan(0);
    for (const l of linked) expect(l.telefono_caller).toBe(phoneOf.get(l.clienta_id!));
  });
});

const cita = (id: string, fecha: number, estado: CitaRecord['estado']): CitaRecord => ({
  id,
  clienta_id: 'c1',
  fecha_hora: fecha,
  servicio: 'Manicura clásica',
  duracion_min: 30,
  precio_cents: 1500,
  estado,
  profesional_nombre: 'Laura',
  sede_nombre: 'Sede Centro',
  notas: null,
  created_at: fecha - 86_400,
});

const state = (counts: SandboxState['counts']): SandboxState => ({
  nowS: NOW_S,
  today: '2026-03-28',
  timeZone: 'Europe/Madrid',
  clientas: [
    { id: 'c1', nombre: 'Ana Ruiz Gil', telefono: '+447700900001', idioma: 'es' },
    { id: 'c2', nombre: 'Eva Sanz Mora', telefono: '+447700900002', idioma: 'es' },
  ],
  upcoming: [cita('u1', NOW_S + 86_400, 'pendiente')],
  due: [cita('d1', NOW_S - 3_600, 'confirmada')],
  staff: [{ profesional: 'Laura', sede: 'Sede Centro' }],
  counts,
  oldest: { clientas: ['c9', 'c8', 'c7'], citas: ['o1', 'o2', 'o3', 'o4'], llamadas: ['l1', 'l2', 'l3'] },
});

describe('a move of the sandbox', () => {
  it('books, moves bookings on and receives a call, in the write path’s line shapes', () => {
    const lines = sandboxMove('sb', state({ clientas: 2, citas: 2, llamadas: 0 }));
    const citas = lines.filter((l) => l.type === 'cita' && !('deleted' in l)) as CitaRecord[];
    expect(citas.filter((c) => c.id === 'u1').map((c) => c.estado)).toEqual([expect.stringMatching(/^(confirmada|cancelada)$/)]);
    expect(citas.filter((c) => c.id === 'd1').map((c) => c.estado)).toEqual([expect.stringMatching(/^(completada|no_asistio)$/)]);
    const booked = citas.filter((c) => c.id !== 'u1' && c.id !== 'd1');
    expect(booked.length).toBeGreaterThanOrEqual(1);
    for (const c of booked) {
      expect(c.estado).toBe('pendiente');
      expect(c.fecha_hora).toBeGreaterThan(NOW_S);
    }
    const calls = lines.filter((l) => l.type === 'llamada');
    expect(calls).toHaveLength(1);
    expect(lines.some((l) => 'deleted' in l)).toBe(false);
    // The same state and time: the same move.
    expect(sandboxMove('sb', state({ clientas: 2, citas: 2, llamadas: 0 }))).toEqual(lines);
  });

  it('past its bounds deletes the oldest records, never more than a few, so the sandbox does not grow', () => {
    const full = state({ clientas: SANDBOX_BOUNDS.clientas, citas: SANDBOX_BOUNDS.citas, llamadas: SANDBOX_BOUNDS.llamadas });
    for (let t = 0; t < 50; t++) {
      const s = { ...full, nowS: NOW_S + t * 60 };
      const lines = sandboxMove('sb', s);
      const added = (type: string) => lines.filter((l) => l.type === type && !('deleted' in l) && !['u1', 'd1'].includes(l.id)).length;
      const deleted = (type: string) => lines.filter((l) => l.type === type && 'deleted' in l).length;
      expect(deleted('cita')).toBe(added('cita'));
      expect(deleted('llamada')).toBe(added('llamada'));
      expect(deleted('clienta')).toBe(added('clienta'));
      expect(lines.filter((l) => 'deleted' in l).map((l) => l.id)).not.toContain('c1');
    }
  });
});
