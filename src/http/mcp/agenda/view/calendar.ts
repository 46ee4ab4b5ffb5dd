// The agenda's decisions, pure (no DOM, no clock, no machine time zone): which week a day is in,
// the days of a week, which appointments fall on which day, and when each ends. Every date is a
// calendar day of the clinic (`YYYY-MM-DD`) and every time is read from the digits of the API's
// RFC 3339 timestamp, which carries the clinic's own offset: `2026-03-29T10:00:00+02:00` is 10:00
// on 29 March in the clinic whatever zone the host or the browser is in. Day arithmetic runs on
// UTC dates, where every day has 24 hours.

/** The fields of an appointment (the API's Cita) that the agenda draws. */
export interface AgendaCita {
  id: string;
  fecha_hora: string;
  duracion_min: number;
  cliente_nombre: string;
  servicio: string;
  estado: string;
  profesional_nombre: string;
  sede_nombre: string;
  telefono?: string | null;
}

/** The part of list_citas's result the agenda reads. */
export interface AgendaPage {
  citas: AgendaCita[];
  total: number;
  offset: number;
  rango: { desde: string | null; hasta: string | null };
}

const DAY_MS = 86_400_000;
const toMs = (date: string) => Date.UTC(Number(date.slice(0, 4)), Number(date.slice(5, 7)) - 1, Number(date.slice(8, 10)));
const fromMs = (ms: number) => new Date(ms).toISOString().slice(0, 10);

export function addDays(date: string, n: number): string {
  return fromMs(toMs(date) + n * DAY_MS);
}

/** The Monday of the week (Monday to Sunday) that holds `date`. */
export function mondayOf(date: string): string {
  const weekday = (new Date(toMs(date)).getUTCDay() + 6) % 7; // Monday 0 ... Sunday 6
  return addDays(date, -weekday);
}

/** The seven days of the week that starts on `monday`. */
export function weekDays(monday: string): string[] {
  return Array.from({ length: 7 }, (_, i) => addDays(monday, i));
}

/** A calendar day as a UTC Date, for Intl formatting with timeZone 'UTC' (the same day everywhere). */
export const dayAsDate = (date: string) => new Date(toMs(date));

export const localDay = (c: Pick<AgendaCita, 'fecha_hora'>) => c.fecha_hora.slice(0, 10);
export const localTime = (c: Pick<AgendaCita, 'fecha_hora'>) => c.fecha_hora.slice(11, 16);
/** The UTC offset the clinic had at that time (`+02:00`; `Z` written as `+00:00`). */
export const offsetOf = (c: Pick<AgendaCita, 'fecha_hora'>) => (c.fecha_hora.slice(19) === 'Z' ? '+00:00' : c.fecha_hora.slice(19));

/**
 * The wall-clock end, `HH:MM`, start plus duration (past midnight it wraps: 23:30 + 60 min is 00:30).
 * An appointment across the night of a clock change ends an hour off on the wall; the API gives
 * no end time, and the agenda shows starts, which are exact.
 */
export function localEnd(c: Pick<AgendaCita, 'fecha_hora' | 'duracion_min'>): string {
  const start = Number(c.fecha_hora.slice(11, 13)) * 60 + Number(c.fecha_hora.slice(14, 16));
  const end = (start + c.duracion_min) % 1440;
  return `${String(Math.floor(end / 60)).padStart(2, '0')}:${String(end % 60).padStart(2, '0')}`;
}

/** The appointments of each day of `days`, each day's in the order they start (the instant: a repeated hour sorts right). */
export function byDay(citas: readonly AgendaCita[], days: readonly string[]): Map<string, AgendaCita[]> {
  const out = new Map(days.map((d) => [d, [] as AgendaCita[]]));
  for (const c of citas) out.get(localDay(c))?.push(c);
  for (const list of out.values()) list.sort((a, b) => Date.parse(a.fecha_hora) - Date.parse(b.fecha_hora) || (a.id < b.id ? -1 : 1));
  return out;
}

/** Whether the result covers `date` (its range's bounds, null: unbounded). */
export function covers(page: Pick<AgendaPage, 'rango'>, date: string): boolean {
  const { desde, hasta } = page.rango;
  return (desde === null || date >= desde) && (hasta === null || date <= hasta);
}

/** The day the first view shows the week of: the range's first day, else the first appointment's, else the range's last. */
export function anchorDay(page: AgendaPage): string | null {
  return page.rango.desde ?? (page.citas[0] ? localDay(page.citas[0]) : null) ?? page.rango.hasta;
}

/** The distinct UTC offsets of a set of appointments, in the order met (two in a week of a clock change). */
export function offsets(citas: readonly AgendaCita[]): string[] {
  return [...new Set([...citas].sort((a, b) => Date.parse(a.fecha_hora) - Date.parse(b.fecha_hora)).map(offsetOf))];
}

/** The arguments of the list_citas call for the week of `monday`, keeping the first call's status filter. */
export function weekArguments(monday: string, estado: unknown): Record<string, string | number> {
  return {
    desde: monday,
    hasta: addDays(monday, 6),
    limit: 500,
    ...(typeof estado === 'string' && estado !== '' ? { estado } : {}),
  };
}
