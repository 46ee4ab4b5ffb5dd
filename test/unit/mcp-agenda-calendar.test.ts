// The MCP agenda view's decisions (src/http/mcp/agenda/view/calendar.ts), pure: weeks from Monday,
// days and hours read from the API's own digits (the clinic's wall clock, never the machine's
// zone), a repeated hour of the autumn change in the order of the instants, and the arguments of
// the next week's list_citas call. The view drawn in a browser: test/browser/mcp-agenda.test.ts.
import { describe, expect, it } from 'vitest';
import {
  addDays,
  anchorDay,
  byDay,
  covers,
  localEnd,
  mondayOf,
  offsets,
  weekArguments,
  weekDays,
  type AgendaCita,
} from '../../src/http/mcp/agenda/view/calendar.js';
import { langOf } from '../../src/http/mcp/agenda/view/labels.js';

const cita = (id: string, fecha_hora: string, duracion_min = 60): AgendaCita => ({
  id,
  fecha_hora,
  duracion_min,
  cliente_nombre: 'C',
  servicio: 'S',
  estado: 'confirmada',
  profesional_nombre: 'P',
  sede_nombre: 'L',
});

describe('the agenda view’s calendar', () => {
  it('weeks run Monday to Sunday, across month, year and clock changes', () => {
    expect(mondayOf('2026-03-29')).toBe('2026-03-23'); // a Sunday, the day of the spring change
    expect(mondayOf('2026-03-23')).toBe('2026-03-23');
    expect(mondayOf('2027-01-01')).toBe('2026-12-28');
    expect(weekDays('2026-10-19')).toEqual([
      '2026-10-19',
      '2026-10-20',
      '2026-10-21',
      '2026-10-22',
      '2026-10-23',
      '2026-10-24',
      '2026-10-25',
    ]);
    expect(addDays('2026-03-28', 2)).toBe('2026-03-30');
  });

  it('places each appointment on its own day, the repeated hour of the autumn change in the order of the instants', () => {
    const days = weekDays('2026-10-19');
    const later = cita('a', '2026-10-25T02:30:00+01:00');
    const earlier = cita('b', '2026-10-25T02:30:00+02:00');
    const before = cita('c', '2026-10-24T23:30:00+02:00');
    const next = cita('d', '2026-10-26T09:00:00+01:00');
    const got = byDay([later, before, earlier, next], days);
    expect(got.get('2026-10-25')!.map((c) => c.id)).toEqual(['b', 'a']);
    expect(got.get('2026-10-24')!.map((c) => c.id)).toEqual(['c']);
    expect([...got.values()].flat()).toHaveLength(3);
    expect(offsets([later, before, earlier])).toEqual(['+02:00', '+01:00']);
    expect(offsets([cita('z', '2026-01-05T10:00:00Z')])).toEqual(['+00:00']);
  });

  it('ends an appointment on the wall clock, past midnight too', () => {
    expect(localEnd(cita('a', '2026-03-28T09:15:00+01:00', 45))).toBe('10:00');
    expect(localEnd(cita('a', '2026-03-29T23:30:00+02:00', 60))).toBe('00:30');
  });

  it('knows the days a result covers and the week it opens on', () => {
    const page = {
      citas: [cita('a', '2026-03-29T10:00:00+02:00')],
      total: 1,
      offset: 0,
      rango: { desde: '2026-03-28', hasta: '2026-04-27' },
    };
    expect(covers(page, '2026-03-27')).toBe(false);
    expect(covers(page, '2026-03-28')).toBe(true);
    expect(covers({ rango: { desde: null, hasta: null } }, '1999-01-01')).toBe(true);
    expect(anchorDay(page)).toBe('2026-03-28');
    expect(anchorDay({ ...page, rango: { desde: null, hasta: null } })).toBe('2026-03-29');
    expect(anchorDay({ ...page, citas: [], rango: { desde: null, hasta: null } })).toBeNull();
  });

  it('asks list_citas for a whole week, keeping the first call’s status filter', () => {
    expect(weekArguments('2026-03-30', undefined)).toEqual({ desde: '2026-03-30', hasta: '2026-04-05', limit: 500 });
    expect(weekArguments('2026-03-30', 'pendiente')).toEqual({ desde: '2026-03-30', hasta: '2026-04-05', limit: 500, estado: 'pendiente' });
    expect(weekArguments('2026-03-30', 7)).toEqual({ desde: '2026-03-30', hasta: '2026-04-05', limit: 500 });
  });

  it('speaks Spanish to an es locale, English to any other or none', () => {
    expect(['es', 'es-ES', 'ES-mx', 'en-GB', 'fr', 'eso', undefined].map(langOf)).toEqual(['es', 'es', 'es', 'en', 'en', 'en', 'en']);
  });
});
