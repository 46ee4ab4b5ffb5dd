// One move of a sandbox (test mode): what happens in a synthetic clinic in a minute, as import
// lines for the normal write path (so each change is an event of the sandbox's feed and webhooks).
// A new clienta now and then, new bookings, bookings confirmed, attended or missed once their time
// has passed, a cancellation, a call; and the oldest records deleted past a bound, so a sandbox
// that runs for months stays the size it started. Pure: the same state and seed give the same lines.
import type { CitaRecord } from '../collections/index.js';
import type { DeletionRecord, Estado, ImportRecord } from '../domain/records.js';
import { fictionalCallerPhone, fictionalClientaPhone, fictionalEmail, FICTIONAL_CLIENTA_PHONES } from './fictional.js';
import { Rng, Weighted } from './random.js';
import { APELLIDOS, NOMBRES_MUJER, SERVICIOS } from './vocabulary.js';
import { WallClock } from './wall-clock.js';

/** A sandbox keeps at most this many records of each kind (the oldest go first, a few per move). */
export const SANDBOX_BOUNDS = { clientas: 60, citas: 300, llamadas: 150 } as const;
/** Deletions per kind and move, at most: each move stays a small write. */
const DELETIONS_PER_MOVE = 3;
const SERVICE = new Weighted(SERVICIOS.map((s) => [s, s[3]] as const));

export interface SandboxClienta {
  id: string;
  nombre: string;
  telefono: string;
  idioma: string | null;
}

export interface SandboxState {
  /** epoch seconds */
  nowS: number;
  /** YYYY-MM-DD in the clinic's zone */
  today: string;
  timeZone: string;
  clientas: readonly SandboxClienta[];
  /** pendiente or confirmada citas still to come, earliest first (a few) */
  upcoming: readonly CitaRecord[];
  /** pendiente or confirmada citas whose time has passed, earliest first (a few) */
  due: readonly CitaRecord[];
  /** the professionals and their sedes the sandbox already has */
  staff: readonly { profesional: string; sede: string }[];
  counts: { clientas: number; citas: number; llamadas: number };
  /** the oldest records' ids, oldest first (at least DELETIONS_PER_MOVE of each when there are) */
  oldest: { clientas: readonly string[]; citas: readonly string[]; llamadas: readonly string[] };
}

export type SandboxLine = ImportRecord | DeletionRecord;

function hash32(text: string): number {
  let h = 2166136261;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 16777619);
  return h >>> 0;
}

/** The lines of one move of sandbox `sandboxId` at `s.nowS`. */
export function sandboxMove(sandboxId: string, s: SandboxState): SandboxLine[] {
  const rng = new Rng(hash32(`${sandboxId}:${s.nowS}`));
  const clock = new WallClock(s.today, s.timeZone);
  const out: SandboxLine[] = [];
  const clientas = [...s.clientas];

  // A new clienta, about every other move, while there is room for her number.
  const taken = new Set(clientas.map((c) => c.telefono));
  if (rng.chance(0.5) && taken.size < FICTIONAL_CLIENTA_PHONES) {
    let phone = fictionalClientaPhone(rng.int(FICTIONAL_CLIENTA_PHONES));
    while (taken.has(phone)) phone = fictionalClientaPhone(rng.int(FICTIONAL_CLIENTA_PHONES));
    const first = rng.pick(NOMBRES_MUJER);
    const s1 = rng.pick(APELLIDOS);
    const s2 = rng.pick(APELLIDOS);
    const local = `${first}.${s1}`
      .normalize('NFD')
      .replace(/[\u0300-\u036f]/g, '')
      .toLowerCase()
      .replace(/[^a-z.]/g, '');
    const c: SandboxClienta = { id: rng.uuid(), nombre: `${first} ${s1} ${s2}`, telefono: phone, idioma: 'es' };
    clientas.push(c);
    out.push({
      type: 'clienta',
      ...c,
      email: fictionalEmail(`${local}@x`),
      vip: rng.chance(0.08),
      cliente_desde: s.today,
      created_at: s.nowS,
    });
  }

  // One or two new bookings, 1 to 30 days ahead, on the hour or half hour between 09:00 and 19:00.
  let newCitas = 0;
  if (clientas.length > 0 && s.staff.length > 0) {
    for (let n = rng.between(1, 2); n > 0; n--, newCitas++) {
      const [servicio, duracion, precio] = SERVICE.pick(rng);
      const staff = rng.pick(s.staff);
      const fecha = clock.at(rng.between(1, 30), rng.between(9, 18), rng.chance(0.5) ? 0 : 30);
      out.push({
        type: 'cita',
        id: rng.uuid(),
        clienta_id: rng.pick(clientas).id,
        fecha_hora: fecha,
        servicio,
        duracion_min: duracion,
        precio_cents: precio,
        estado: 'pendiente',
        profesional_nombre: staff.profesional,
        sede_nombre: staff.sede,
        notas: null,
        created_at: s.nowS,
      });
    }
  }

  // Bookings move on: one to come is confirmed (or, now and then, cancelled); one whose time
  // has passed is attended, or missed.
  const moved = (c: CitaRecord, estado: Estado) => out.push({ type: 'cita', ...c, estado });
  const pending = s.upcoming.find((c) => c.estado === 'pendiente');
  const next = pending ?? (rng.chance(0.15) ? s.upcoming[0] : undefined);
  if (next) moved(next, next === pending && !rng.chance(0.15) ? 'confirmada' : 'cancelada');
  for (const c of s.due.slice(0, 2)) moved(c, rng.chance(0.9) ? 'completada' : 'no_asistio');

  // A call that just ended: a clienta's, or a caller the clinic does not know.
  const duracion = rng.between(30, 300);
  const known = clientas.length > 0 && rng.chance(0.8) ? rng.pick(clientas) : null;
  out.push({
    type: 'llamada',
    id: rng.uuid(),
    clienta_id: known?.id ?? null,
    fecha_hora: s.nowS - duracion,
    cliente_nombre: known?.nombre ?? null,
    telefono_caller: known?.telefono ?? fictionalCallerPhone(rng.int(1_000)),
    duracion_segundos: duracion,
    resultado: rng.pick(['agendada', 'info', 'sin_accion', 'cancelada', 'transferida'] as const),
    idioma: known?.idioma ?? 'es',
    created_at: s.nowS,
  });

  // Bounded: past a bound, the oldest records go (deleting a clienta deletes her citas too).
  const over = (kind: keyof typeof SANDBOX_BOUNDS, added: number) => Math.max(0, s.counts[kind] + added - SANDBOX_BOUNDS[kind]);
  const deletions = (type: 'cita' | 'llamada' | 'clienta', ids: readonly string[], n: number) => {
    for (const id of ids.slice(0, Math.min(n, DELETIONS_PER_MOVE))) out.push({ type, id, deleted: true });
  };
  const touched = new Set(out.map((l) => l.id));
  deletions(
    'cita',
    s.oldest.citas.filter((id) => !touched.has(id)),
    over('citas', newCitas),
  );
  deletions('llamada', s.oldest.llamadas, over('llamadas', 1));
  const busy = new Set(out.flatMap((l) => ('clienta_id' in l && l.clienta_id ? [l.clienta_id] : [])));
  deletions(
    'clienta',
    s.oldest.clientas.filter((id) => !busy.has(id) && !touched.has(id)),
    over('clientas', clientas.length - s.clientas.length),
  );
  return out;
}
