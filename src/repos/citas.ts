// Appointment queries. clinicId is the first filter of every query and the leading column of
// every index used here: (clinic_id, fecha_hora, id) and (clinic_id, estado, fecha_hora, id).
import { sql, type Kysely } from 'kysely';
import { dialectOf } from '../db/dialect.js';
import type { CitasTable, DB } from '../db/schema.js';

export interface CitasFilter {
  /** [start, end) in epoch seconds: whole local days already resolved by the caller. */
  start: number;
  end: number;
  /** the same range as local dates, for the per-day counts. */
  desde: string;
  hasta: string;
  estado: string | null;
}

/** A page row: the cita's own columns plus the client's current name and phone. */
export type CitaRow = Pick<
  CitasTable,
  'id' | 'fecha_hora' | 'servicio' | 'duracion_min' | 'precio_cents' | 'estado' | 'profesional_nombre' | 'sede_nombre' | 'notas' | 'created_at'
> & { cliente_nombre: string; telefono: string };

export async function listCitas(
  db: Kysely<DB>,
  clinicId: string,
  f: CitasFilter,
  limit: number,
  offset: number,
): Promise<CitaRow[]> {
  // SQLite: with every column selected, both (clinic_id, fecha_hora, id) and (clinic_id, estado,
  // fecha_hora, id) look alike to its planner, and it takes the first; for an estado with few
  // rows in the range that reads the whole range (measured: 2.9 s instead of 0.3 ms at 1 M citas).
  const from = f.estado !== null && dialectOf(db) === 'sqlite'
    ? db.selectFrom(sql<CitasTable>`citas`.as<'c'>(sql`c indexed by citas_by_estado_time`))
    : db.selectFrom('citas as c');
  let q = from
    .innerJoin('clientas as cl', (j) => j.onRef('cl.clinic_id', '=', 'c.clinic_id').onRef('cl.id', '=', 'c.clienta_id'))
    .select([
      'c.id', 'c.fecha_hora', 'cl.nombre as cliente_nombre', 'cl.telefono', 'c.servicio', 'c.duracion_min',
      'c.precio_cents', 'c.estado', 'c.profesional_nombre', 'c.sede_nombre', 'c.notas', 'c.created_at',
    ])
    .where('c.clinic_id', '=', clinicId)
    .where('c.fecha_hora', '>=', f.start)
    .where('c.fecha_hora', '<', f.end);
  if (f.estado !== null) q = q.where('c.estado', '=', f.estado);
  return q.orderBy('c.fecha_hora').orderBy('c.id').limit(limit).offset(offset).execute();
}

/** Matches in the range, summed from the per-day counts (exact: the range is whole local days). */
export async function countCitas(db: Kysely<DB>, clinicId: string, f: CitasFilter): Promise<number> {
  let q = db
    .selectFrom('citas_por_dia')
    .select((eb) => eb.fn.sum<number | string | null>('n').as('total'))
    .where('clinic_id', '=', clinicId)
    .where('dia', '>=', f.desde)
    .where('dia', '<=', f.hasta);
  if (f.estado !== null) q = q.where('estado', '=', f.estado);
  const row = await q.executeTakeFirst();
  return Number(row?.total ?? 0);
}
