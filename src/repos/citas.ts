// Appointment queries. clinicId is the first filter of every query and the leading column of
// every index used here: (clinic_id, fecha_hora, id), (clinic_id, estado, fecha_hora, id) and,
// for updated_since, (clinic_id, updated_at, id).
import { sql, type Kysely, type SelectQueryBuilder } from 'kysely';
import { compiledOnce } from '../db/compiled-once.js';
import { dialectOf } from '../db/dialect.js';
import { indexedBy } from '../db/indexed-by.js';
import type { CitasTable, DB } from '../db/schema.js';
import { inIds } from '../db/in-ids.js';
import { clientasJoined } from './clienta-join.js';

export interface CitasFilter {
  /** [start, end) in epoch seconds: whole local days already resolved by the caller. */
  start: number;
  end: number;
  /** the same range as local dates, for the per-day counts. */
  desde: string;
  hasta: string;
  estado: string | null;
}

/** updated_since: records changed at or after `since`, and within [start, end) when given. */
export interface CitasChangedFilter {
  since: number;
  start: number | null;
  end: number | null;
  estado: string | null;
}

/** A page row: the cita's own columns plus the client's current name and phone. */
export type CitaRow = Pick<
  CitasTable,
  | 'id'
  | 'fecha_hora'
  | 'servicio'
  | 'duracion_min'
  | 'precio_cents'
  | 'estado'
  | 'profesional_nombre'
  | 'sede_nombre'
  | 'notas'
  | 'created_at'
  | 'updated_at'
> & { cliente_nombre: string; telefono: string; /** not shown: whom the row discloses (the access record) */ clienta_id: string };

// `{}`: Kysely's type of a query with nothing selected yet.
// eslint-disable-next-line @typescript-eslint/no-empty-object-type
type From = SelectQueryBuilder<DB & { c: CitasTable }, 'c', {}>;

/** The API's columns of a cita (its client's current name and phone joined): one list for every reader. */
function withClienta(db: Kysely<DB>, from: From) {
  return from
    .innerJoin(clientasJoined(db), (j) => j.onRef('cl.clinic_id', '=', 'c.clinic_id').onRef('cl.id', '=', 'c.clienta_id'))
    .select([
      'c.id',
      'c.fecha_hora',
      'cl.nombre as cliente_nombre',
      'cl.telefono',
      'c.servicio',
      'c.duracion_min',
      'c.precio_cents',
      'c.estado',
      'c.profesional_nombre',
      'c.sede_nombre',
      'c.notas',
      'c.created_at',
      'c.updated_at',
      'c.clienta_id',
    ]);
}

/** `citas as c`, or with its index named on SQLite (see pageQuery). */
function citasFrom(db: Kysely<DB>, index: string | null): From {
  return index !== null
    ? (db.selectFrom(indexedBy<CitasTable, 'c'>(db, 'citas', 'c', index)) as unknown as From)
    : db.selectFrom('citas as c');
}

type PageValues = { clinicId: string; start: number; end: number; estado: string; limit: number; offset: number };
const PAGE_VALUES = ['clinicId', 'start', 'end', 'estado', 'limit', 'offset'] as const;

function pageQuery(db: Kysely<DB>, p: PageValues, byEstado: boolean) {
  // SQLite: with every column selected, both (clinic_id, fecha_hora, id) and (clinic_id, estado,
  // fecha_hora, id) look alike to its planner, and it takes the first; for an estado with few
  // rows in the range that reads the whole range (measured: 2.9 s instead of 0.3 ms at 1 M citas).
  let q = withClienta(db, citasFrom(db, byEstado ? 'citas_by_estado_time' : null))
    .where('c.clinic_id', '=', p.clinicId)
    .where('c.fecha_hora', '>=', p.start)
    .where('c.fecha_hora', '<', p.end);
  if (byEstado) q = q.where('c.estado', '=', p.estado);
  return q.orderBy('c.fecha_hora').orderBy('c.id').limit(p.limit).offset(p.offset);
}

const pageAll = compiledOnce(PAGE_VALUES, (db, p: PageValues) => pageQuery(db, p, false));
const pageByEstado = compiledOnce(PAGE_VALUES, (db, p: PageValues) => pageQuery(db, p, true));

export async function listCitas(db: Kysely<DB>, clinicId: string, f: CitasFilter, limit: number, offset: number): Promise<CitaRow[]> {
  const values = { clinicId, start: f.start, end: f.end, estado: f.estado ?? '', limit, offset };
  return f.estado === null ? pageAll(db, values) : pageByEstado(db, values);
}

type CountValues = { clinicId: string; desde: string; hasta: string; estado: string };
const COUNT_VALUES = ['clinicId', 'desde', 'hasta', 'estado'] as const;

function countQuery(db: Kysely<DB>, p: CountValues, byEstado: boolean) {
  let q = db
    .selectFrom('citas_por_dia')
    .select((eb) => eb.fn.sum<number | string | null>('n').as('total'))
    .where('clinic_id', '=', p.clinicId)
    .where('dia', '>=', p.desde)
    .where('dia', '<=', p.hasta);
  if (byEstado) q = q.where('estado', '=', p.estado);
  return q;
}

const countAll = compiledOnce(COUNT_VALUES, (db, p: CountValues) => countQuery(db, p, false));
const countByEstado = compiledOnce(COUNT_VALUES, (db, p: CountValues) => countQuery(db, p, true));

/** Matches in the range, summed from the per-day counts (exact: the range is whole local days). */
export async function countCitas(db: Kysely<DB>, clinicId: string, f: CitasFilter): Promise<number> {
  const values = { clinicId, desde: f.desde, hasta: f.hasta, estado: f.estado ?? '' };
  const [row] = await (f.estado === null ? countAll(db, values) : countByEstado(db, values));
  return Number(row?.total ?? 0);
}

// updated_since: the (clinic_id, updated_at, id) index in order, the other filters applied to its
// rows. SQLite names the index: its planner would otherwise take a fecha_hora or estado index and sort.
function changed(db: Kysely<DB>, clinicId: string, f: CitasChangedFilter): From {
  let q = citasFrom(db, 'citas_by_updated').where('c.clinic_id', '=', clinicId).where('c.updated_at', '>=', f.since);
  if (f.start !== null) q = q.where('c.fecha_hora', '>=', f.start);
  if (f.end !== null) q = q.where('c.fecha_hora', '<', f.end);
  if (f.estado !== null) q = q.where('c.estado', '=', f.estado);
  return q;
}

/** A page of citas changed at or after `since`, ordered by (updated_at, id). */
export async function listChangedCitas(
  db: Kysely<DB>,
  clinicId: string,
  f: CitasChangedFilter,
  limit: number,
  offset: number,
): Promise<CitaRow[]> {
  return withClienta(db, changed(db, clinicId, f))
    .orderBy('c.updated_at')
    .orderBy('c.id')
    .limit(limit)
    .offset(offset)
    .execute();
}

/** How many citas changed at or after `since` match (counted on the updated_at index range). */
export async function countChangedCitas(db: Kysely<DB>, clinicId: string, f: CitasChangedFilter): Promise<number> {
  const row = await changed(db, clinicId, f)
    .select((eb) => eb.fn.countAll<number | string>().as('total'))
    .executeTakeFirst();
  return Number(row?.total ?? 0);
}

/** The citas of `ids` as the API shows them (those whose clienta is not stored yet are left out). */
export async function citasByIds(db: Kysely<DB>, clinicId: string, ids: readonly string[]): Promise<CitaRow[]> {
  if (ids.length === 0) return [];
  if (dialectOf(db) === 'postgres') {
    // The citas first, by primary key, then their clientas: planned as a join, and with the
    // statistics of tables an import is still filling, PostgreSQL walked the clinic's every clienta
    // and her citas instead (165,000 buffers for 1,000 ids: most of the import's time).
    return withClienta(
      db,
      db
        .with(
          (cte) => cte('c').materialized(),
          (qb) =>
            qb
              .selectFrom('citas')
              .selectAll()
              .where('clinic_id', '=', clinicId)
              .where(inIds(db, 'id', ids)),
        )
        .selectFrom('c') as unknown as From,
    ).execute();
  }
  return withClienta(db, db.selectFrom('citas as c'))
    .where('c.clinic_id', '=', clinicId)
    .where(inIds(db, 'c.id', ids))
    .execute();
}

/** The first start of any of the clinic's citas after `afterSeconds`, or null: when some client's ultima_cita next moves. */
const nextStartQuery = compiledOnce(['clinicId', 'after'] as const, (db, p: { clinicId: string; after: number }) =>
  db
    .selectFrom('citas')
    .select('fecha_hora')
    .where('clinic_id', '=', p.clinicId)
    .where('fecha_hora', '>', p.after)
    .orderBy('fecha_hora')
    // A literal: a constant the builder places as a parameter is bound on every run, and a bound
    // LIMIT has SQLite plan the statement again each time (db/compiled-once.ts).
    .limit(sql.lit(1)),
);

export async function nextCitaStart(db: Kysely<DB>, clinicId: string, afterSeconds: number): Promise<number | null> {
  const [row] = await nextStartQuery(db, { clinicId, after: afterSeconds });
  return row === undefined ? null : Number(row.fecha_hora);
}

/** The first start of one clienta's citas after `afterSeconds`, or null: when her ultima_cita next moves. */
export async function nextCitaStartOf(db: Kysely<DB>, clinicId: string, clientaId: string, afterSeconds: number): Promise<number | null> {
  const row = await db
    .selectFrom('citas')
    .select('fecha_hora')
    .where('clinic_id', '=', clinicId)
    .where('clienta_id', '=', clientaId)
    .where('fecha_hora', '>', afterSeconds)
    .orderBy('fecha_hora')
    .limit(1)
    .executeTakeFirst();
  return row === undefined ? null : Number(row.fecha_hora);
}
