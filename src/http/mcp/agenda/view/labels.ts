// The agenda's words in Spanish and English, chosen by the locale the host gives (its BCP 47
// `locale`: `es`, `es-ES`, `es-MX`... are Spanish; anything else, or none, English). Dates are
// written by Intl in that locale.

export type Lang = 'es' | 'en';

export const ESTADOS = ['pendiente', 'confirmada', 'completada', 'cancelada', 'no_asistio'] as const;

export interface Labels {
  title: string;
  week: string;
  day: string;
  view: string;
  previousWeek: string;
  nextWeek: string;
  previousDay: string;
  nextDay: string;
  weekNav: string;
  dayNav: string;
  legend: string;
  estados: Record<string, string>;
  noCitas: string;
  outside: string;
  loading: string;
  failed: (why: string) => string;
  count: (n: number) => string;
  partial: (shown: number, total: number) => string;
  clinicTime: (offsets: string[]) => string;
  with: string;
  at: string;
  minutes: (n: number) => string;
  openDay: (day: string, n: number) => string;
  empty: string;
  keys: string;
}

const ES: Labels = {
  title: 'Agenda de citas',
  week: 'Semana',
  day: 'Día',
  view: 'Vista',
  previousWeek: 'Semana anterior',
  nextWeek: 'Semana siguiente',
  previousDay: 'Día anterior',
  nextDay: 'Día siguiente',
  weekNav: 'Cambiar de semana',
  dayNav: 'Cambiar de día',
  legend: 'Estados',
  estados: { pendiente: 'Pendiente', confirmada: 'Confirmada', completada: 'Completada', cancelada: 'Cancelada', no_asistio: 'No asistió' },
  noCitas: 'Sin citas',
  outside: 'Fuera de este resultado',
  loading: 'Cargando…',
  failed: (why) => `No se pudo cargar: ${why}`,
  count: (n) => (n === 1 ? '1 cita' : `${n} citas`),
  partial: (shown, total) => `Se muestran ${shown} de ${total} citas de este resultado.`,
  clinicTime: (o) => (o.length === 0 ? 'Horas de la clínica' : `Horas de la clínica (UTC${o.join(' → UTC')})`),
  with: 'con',
  at: 'en',
  minutes: (n) => `${n} min`,
  openDay: (day, n) => `${day}: ${n === 1 ? '1 cita' : `${n} citas`}. Ver el día`,
  empty: 'No hay citas en este resultado.',
  keys: 'Flechas: moverse entre citas y días. Escape: volver a la semana.',
};

const EN: Labels = {
  title: 'Appointments',
  week: 'Week',
  day: 'Day',
  view: 'View',
  previousWeek: 'Previous week',
  nextWeek: 'Next week',
  previousDay: 'Previous day',
  nextDay: 'Next day',
  weekNav: 'Change week',
  dayNav: 'Change day',
  legend: 'Statuses',
  estados: { pendiente: 'Pending', confirmada: 'Confirmed', completada: 'Completed', cancelada: 'Cancelled', no_asistio: 'No-show' },
  noCitas: 'No appointments',
  outside: 'Not in this result',
  loading: 'Loading…',
  failed: (why) => `Could not load: ${why}`,
  count: (n) => (n === 1 ? '1 appointment' : `${n} appointments`),
  partial: (shown, total) => `Showing ${shown} of the ${total} appointments of this result.`,
  clinicTime: (o) => (o.length === 0 ? "Clinic's local time" : `Clinic's local time (UTC${o.join(' → UTC')})`),
  with: 'with',
  at: 'at',
  minutes: (n) => `${n} min`,
  openDay: (day, n) => `${day}: ${n === 1 ? '1 appointment' : `${n} appointments`}. Open the day`,
  empty: 'No appointments in this result.',
  keys: 'Arrow keys: move between appointments and days. Escape: back to the week.',
};

export function langOf(locale: string | undefined): Lang {
  return locale !== undefined && /^es(-|$)/i.test(locale) ? 'es' : 'en';
}

export const labelsFor = (lang: Lang): Labels => (lang === 'es' ? ES : EN);
