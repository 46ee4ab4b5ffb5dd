// Deterministic, realistic demo data for one clinic (`clinic-api demo` and the first run).
//
// Same options => same records, byte for byte: every random choice comes from one seeded PRNG,
// consumed in a fixed order (clinic setup, clientas, citas, llamadas), and "today"/"now" are
// passed in, never read from the machine. It has to stay fast at scale 1000 (1.7 M records), so
// the inner loops do no luxon work: local wall-clock times go through WallClock's cache
// (./wall-clock.ts); the seeded PRNG is ./random.ts. Over 300 lines on purpose: the records are
// made here in the order the PRNG is consumed, and that order is what keeps the output stable.
import type { Estado, ImportRecord, Resultado } from '../domain/records.js';
import { memo } from '../memo.js';
import { isValidDate, isValidTimeZone } from '../time.js';
import { Rng, Weighted } from './random.js';
import { DEMO_PER_UNIT, type DemoCounts } from './sizes.js';
import { WallClock } from './wall-clock.js';
import {
  APELLIDOS,
  DOMINIOS_EMAIL,
  IDIOMA_POR_PREFIJO,
  IDIOMAS_CLIENTA,
  NOMBRES_HOMBRE,
  NOMBRES_MUJER,
  NOTAS,
  PROFESIONALES,
  SEDES,
  SERVICIOS,
} from './vocabulary.js';

export interface DemoOptions {
  seed: number;
  scale: number;
  /** YYYY-MM-DD in the clinic zone. */
  today: string;
  timeZone: string;
  /** Epoch seconds; should fall within `today`. */
  nowSeconds: number;
}

export type { DemoCounts };

export function demoCounts(scale: number): DemoCounts {
  if (!Number.isFinite(scale) || scale <= 0) throw new RangeError(`scale must be a number > 0, got ${scale}`);
  const n = (perUnit: number) => Math.max(1, Math.round(perUnit * scale));
  return { clientas: n(DEMO_PER_UNIT.clientas), citas: n(DEMO_PER_UNIT.citas), llamadas: n(DEMO_PER_UNIT.llamadas) };
}

// ---------------------------------------------------------------------------------------------
// Vocabulary helpers

/** "María José" -> "mariajose", "de la Fuente" -> "delafuente": the local part of an email. */
const ascii = memo(10_000, (name: string): string =>
  name
    .normalize('NFD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z]/g, ''),
);

const DOMAINS = new Weighted(DOMINIOS_EMAIL);
const IDIOMA_CLIENTA = new Weighted<string | null>(IDIOMAS_CLIENTA);
const SERVICE = new Weighted(SERVICIOS.map((s) => [s, s[3]] as const));

function email(rng: Rng, first: string, s1: string, s2: string): string {
  const f = ascii(first);
  const a = ascii(s1);
  const b = ascii(s2);
  let local: string;
  switch (rng.int(5)) {
    case 0:
      local = `${f}.${a}`;
      break;
    case 1:
      local = `${f}${a}${rng.between(10, 99)}`;
      break;
    case 2:
      local = `${f.charAt(0)}${a}${b}`;
      break;
    case 3:
      local = `${f}_${a}${b}`;
      break;
    default:
      local = `${f}.${a}.${b}`;
  }
  return `${local}@${DOMAINS.pick(rng)}`;
}

/** Spanish mobile numbers: 6xx xxx xxx and the newer 71x-74x ranges. */
function spanishMobile(rng: Rng): string {
  return rng.chance(0.85) ? `+346${rng.digits(8)}` : `+347${rng.between(1, 4)}${rng.digits(7)}`;
}

/** A caller the clinic does not know: a new Spanish client, a landline, or a tourist. */
function unknownCaller(rng: Rng, clientPhones: Set<string>): string {
  const r = rng.next();
  if (r < 0.55) {
    // Never a clienta's number: a known number would be a linked call.
    let phone = spanishMobile(rng);
    while (clientPhones.has(phone)) phone = spanishMobile(rng);
    return phone;
  }
  if (r < 0.75) return `+349${rng.between(1, 8)}${rng.digits(7)}`; // landline
  switch (rng.int(6)) {
    case 0:
      return `+33${rng.between(6, 7)}${rng.digits(8)}`; // France
    case 1:
      return `+447${rng.digits(9)}`; // United Kingdom
    case 2:
      return `+491${rng.between(5, 7)}${rng.digits(9)}`; // Germany
    case 3:
      return `+1${rng.between(2, 9)}${rng.digits(9)}`; // USA / Canada
    case 4:
      return `+3519${rng.digits(8)}`; // Portugal
    default:
      return `+393${rng.digits(9)}`; // Italy
  }
}

/** The assistant answers in the caller's language: Spanish or Catalan at home, mostly the
 * country's language from abroad (some foreigners living in Spain speak Spanish). */
function callerLanguage(rng: Rng, phone: string): string {
  if (phone.startsWith('+34')) return rng.chance(0.92) ? 'es' : 'ca';
  if (rng.chance(0.25)) return 'es';
  for (const [prefix, idioma] of IDIOMA_POR_PREFIJO) if (phone.startsWith(prefix)) return idioma;
  return 'en';
}

// ---------------------------------------------------------------------------------------------
// Domain shape of the demo clinic

const OPEN_HOUR = 9; // citas: 09:00-20:00, Monday to Saturday
const CLOSE_HOUR = 20;
const CALL_HOURS = new Weighted<number>([
  // The voice assistant answers 08:00-21:00 every day; calls peak mid-morning and late afternoon.
  [8, 4],
  [9, 9],
  [10, 11],
  [11, 11],
  [12, 10],
  [13, 7],
  [14, 5],
  [15, 7],
  [16, 9],
  [17, 9],
  [18, 8],
  [19, 6],
  [20, 4],
]);
const PAST_ESTADO = new Weighted<Estado>([
  ['completada', 84],
  ['cancelada', 9],
  ['no_asistio', 7],
]);
const SOON_ESTADO = new Weighted<Estado>([
  ['confirmada', 75],
  ['pendiente', 17],
  ['cancelada', 8],
]);
const LATER_ESTADO = new Weighted<Estado>([
  ['pendiente', 55],
  ['confirmada', 37],
  ['cancelada', 8],
]);
const RESULTADO = new Weighted<Resultado>([
  ['agendada', 34],
  ['info', 28],
  ['sin_accion', 16],
  ['cancelada', 12],
  ['transferida', 10],
]);
/** Call length in seconds by outcome: bookings take longest, hang-ups are short. */
const CALL_SECONDS: Record<Resultado, readonly [number, number]> = {
  agendada: [90, 600],
  info: [40, 360],
  cancelada: [45, 240],
  transferida: [30, 180],
  sin_accion: [20, 90],
};
const DAY = 86_400;
const CITA_PAST_DAYS = 300;
const CITA_FUTURE_DAYS = 65;
const CLIENTA_MAX_AGE_DAYS = 4 * 365;

function shuffled<T>(rng: Rng, items: readonly T[]): T[] {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = rng.int(i + 1);
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

export function* generateDemo(opts: DemoOptions): Generator<ImportRecord> {
  const counts = demoCounts(opts.scale);
  if (!isValidDate(opts.today)) throw new RangeError(`today must be YYYY-MM-DD, got ${opts.today}`);
  if (!isValidTimeZone(opts.timeZone)) throw new RangeError(`unknown time zone ${opts.timeZone}`);
  if (!Number.isFinite(opts.nowSeconds)) throw new RangeError('nowSeconds must be a finite number');

  const rng = new Rng(opts.seed);
  const clock = new WallClock(opts.today, opts.timeZone);
  const now = Math.floor(opts.nowSeconds);

  // Each seed is a different clinic: 2-3 sedes, 4-6 professionals, each based at one sede.
  const sedes = shuffled(rng, SEDES).slice(0, rng.between(2, 3));
  const profesionales = shuffled(rng, PROFESIONALES).slice(0, rng.between(4, 6));
  const sedeOf = profesionales.map((_, i) => sedes[i % sedes.length]!);

  // --- clientas. Kept in columns: citas and llamadas link back to them.
  const n = counts.clientas;
  // The first 15% are regulars: half of all citas go to them (a manicure every few weeks).
  const regulars = Math.max(1, Math.floor(n * 0.15));
  const ids: string[] = new Array<string>(n);
  const nombres: string[] = new Array<string>(n);
  const telefonos: string[] = new Array<string>(n);
  const idiomas: (string | null)[] = new Array<string | null>(n);
  const desde = new Int32Array(n); // cliente_desde as a day offset from today (<= 0)
  const createdAt = new Float64Array(n);
  const phones = new Set<string>();
  let oldest = 0;

  for (let i = 0; i < n; i++) {
    const first = rng.chance(0.88) ? rng.pick(NOMBRES_MUJER) : rng.pick(NOMBRES_HOMBRE);
    const s1 = rng.pick(APELLIDOS);
    const s2 = rng.pick(APELLIDOS);
    let telefono = spanishMobile(rng);
    while (phones.has(telefono)) telefono = spanishMobile(rng);
    phones.add(telefono);
    const regular = i < regulars;
    const off = -rng.int(CLIENTA_MAX_AGE_DAYS + 1);
    const created = Math.min(clock.at(off, rng.between(11, 13), rng.int(60), rng.int(60)), now);
    const idioma = IDIOMA_CLIENTA.pick(rng);

    ids[i] = rng.uuid();
    nombres[i] = `${first} ${s1} ${s2}`;
    telefonos[i] = telefono;
    idiomas[i] = idioma;
    desde[i] = off;
    createdAt[i] = created;
    if (off < desde[oldest]!) oldest = i;

    yield {
      type: 'clienta',
      id: ids[i]!,
      nombre: nombres[i]!,
      telefono,
      email: rng.chance(0.13) ? null : email(rng, first, s1, s2),
      idioma,
      // VIPs are mostly regulars; overall about 8%.
      vip: rng.chance(regular ? 0.25 : 0.05),
      cliente_desde: clock.date(off),
      created_at: created,
    };
  }

  /** A clienta who was already a client on day `off` (a few tries, then the oldest one). */
  const clientaOn = (off: number): number => {
    for (let t = 0; t < 6; t++) {
      const i = rng.chance(0.5) ? rng.int(regulars) : rng.int(n);
      if (desde[i]! <= off) return i;
    }
    return oldest;
  };

  // --- citas
  const openDays: number[] = [];
  for (let off = -CITA_PAST_DAYS; off <= CITA_FUTURE_DAYS; off++) if (clock.weekday(off) !== 0) openDays.push(off);

  for (let k = 0; k < counts.citas; k++) {
    const off = rng.pick(openDays);
    const [servicio, duracion, precio] = SERVICE.pick(rng);
    // A quarter-hour start (70% on the half hour) that lets the service end by closing time.
    const firstSlot = (OPEN_HOUR * 60) / 15;
    const lastSlot = Math.floor((CLOSE_HOUR * 60 - duracion) / 15);
    let slot = rng.between(firstSlot, lastSlot);
    if (rng.chance(0.7)) slot -= slot % 2;
    const minutes = slot * 15;
    const fecha = clock.at(off, Math.floor(minutes / 60), minutes % 60);
    const c = clientaOn(off);
    const p = rng.int(profesionales.length);

    let estado: Estado;
    if (fecha <= now) estado = PAST_ESTADO.pick(rng);
    else estado = (fecha - now < 2 * DAY ? SOON_ESTADO : LATER_ESTADO).pick(rng);

    // Booked hours to weeks ahead; a booking is never in the future, nor before the client existed.
    const r = rng.next();
    const lead = r < 0.1 ? rng.between(600, 6 * 3600) : r < 0.7 ? rng.between(1, 14) * DAY : rng.between(15, 60) * DAY;
    let created = fecha - lead - rng.int(3600);
    if (created > now) created = now - rng.int(7 * DAY);
    created = Math.max(created, Math.min(createdAt[c]!, fecha, now));

    yield {
      type: 'cita',
      id: rng.uuid(),
      clienta_id: ids[c]!,
      fecha_hora: fecha,
      servicio,
      duracion_min: duracion,
      precio_cents: precio,
      estado,
      profesional_nombre: profesionales[p]!,
      sede_nombre: sedeOf[p]!,
      notas: rng.chance(0.7) ? null : rng.pick(NOTAS),
      created_at: created,
    };
  }

  // --- llamadas: the last min(365, 14 x scale) days, ending now.
  const callDays = Math.max(1, Math.min(365, Math.round(14 * opts.scale)));
  for (let k = 0; k < counts.llamadas; k++) {
    const resultado = RESULTADO.pick(rng);
    const [lo, hi] = CALL_SECONDS[resultado];
    const duracion = rng.between(lo, hi);
    let off = 0;
    let fecha = Infinity;
    // Redraw calls that would end after now (later today); after a few misses (it is early
    // morning and the window is just today) fall back to yesterday, which is all past.
    for (let t = 0; fecha + duracion > now; t++) {
      off = t < 8 ? -rng.int(callDays) : -1;
      fecha = clock.at(off, CALL_HOURS.pick(rng), rng.int(60), rng.int(60));
      if (t > 8) fecha = Math.min(fecha, now - duracion); // `now` before `today`: still never future
    }

    let clientaId: string | null = null;
    let nombre: string | null = null;
    let telefono: string;
    let idioma: string;
    if (rng.chance(0.8)) {
      const c = clientaOn(off);
      clientaId = ids[c]!;
      nombre = nombres[c]!;
      telefono = telefonos[c]!;
      idioma = idiomas[c] ?? 'es';
    } else {
      telefono = unknownCaller(rng, phones);
      idioma = callerLanguage(rng, telefono);
    }

    yield {
      type: 'llamada',
      id: rng.uuid(),
      clienta_id: clientaId,
      fecha_hora: fecha,
      cliente_nombre: nombre,
      telefono_caller: telefono,
      duracion_segundos: duracion,
      resultado,
      idioma,
      created_at: fecha + duracion,
    };
  }
}
