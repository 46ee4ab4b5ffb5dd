// Call queries, newest first. Indexes: (clinic_id, fecha_hora, id), (clinic_id, resultado,
// fecha_hora, id) and, for updated_since, (clinic_id, updated_at, id).
import { sql, type Kysely, type SelectQueryBuilder } from 'kysely';
import { compiledOnce, perShape } from '../db/compiled-once.js';
import { dialectOf } from '../db/dialect.js';
import type { DB, LlamadasTable } from '../db/schema.js';
import { inIds } from '../db/in-ids.js';

export interface LlamadasFilter {
  start: number;
  /** null: no upper bound */
  end: number | null;
  desde: string;
  hasta: string | null;
  resultado: string | null;
}

/** updated_since: calls changed at or after `since`, within [start, end) when given. */
export interface LlamadasChangedFilter {
  since: number;
  start: number | null;
  end: number | null;
  resultado: string | null;
}

/** A page row: cliente_nombre is the linked client's current name, else what was recorded. */
export type LlamadaRow = Pick<
  LlamadasTable,
  'id' | 'fecha_hora' | 'cliente_nombre' | 'telefono_caller' | 'duracion_segundos' | 'resultado' | 'idioma' | 'created_at' | 'updated_at'
>;

// `{}`: Kysely's type of a query with nothing selected yet.
// eslint-disable-next-line @typescript-eslint/no-empty-object-type
type From = SelectQueryBuilder<DB & { l: LlamadasTable }, 'l', {}>;

/** `llamadas as l`, or with its index named on SQLite (its planner cannot tell the indexes apart). */
function llamadasFrom(db: Kysely<DB>, index: string | null): From {
  return index !== null && dialectOf(db) === 'sqlite'
    ? (db.selectFrom(sql<LlamadasTable>`llamadas`.as<'l'>(sql.raw(`l indexed by ${index}`))) as unknown as From)
    : db.selectFrom('llamadas as l');
}

/** The API's columns of a call: one list for every reader. */
function withCaller(from: From) {
  return from
    .leftJoin('clientas as cl', (j) => j.onRef('cl.clinic_id', '=', 'l.clinic_id').onRef('cl.id', '=', 'l.clienta_id'))
    .select((eb) => [
      'l.id',
      'l.fecha_hora',
      // A linked caller shows the client's current name; an unknown caller keeps what was recorded.
      eb.fn.coalesce('cl.nombre', 'l.cliente_nombre').as('cliente_nombre'),
      'l.telefono_caller',
      'l.duracion_segundos',
      'l.resultado',
      'l.idioma',
      'l.created_at',
      'l.updated_at',
    ]);
}

type PageValues = { clinicId: string; start: number; end: number; resultado: string; limit: number; offset: number };
const PAGE_VALUES = ['clinicId', 'start', 'end', 'resultado', 'limit', 'offset'] as const;

function pageQuery(db: Kysely<DB>, p: PageValues, bounded: boolean, byResultado: boolean) {
  let q = llamadasFrom(db, byResultado ? 'llamadas_by_resultado_time' : null)
    .where('l.clinic_id', '=', p.clinicId)
    .where('l.fecha_hora', '>=', p.start);
  if (bounded) q = q.where('l.fecha_hora', '<', p.end);
  if (byResultado) q = q.where('l.resultado', '=', p.resultado);
  return withCaller(q).orderBy('l.fecha_hora', 'desc').orderBy('l.id', 'desc').limit(p.limit).offset(p.offset);
}

/** One compiled-once query per shape: [bounded][byResultado]. */
const pages = [false, true].map((bounded) =>
  [false, true].map((byResultado) => compiledOnce(PAGE_VALUES, (db, p: PageValues) => pageQuery(db, p, bounded, byResultado))),
);

export async function listLlamadas(
  db: Kysely<DB>,
  clinicId: string,
  f: LlamadasFilter,
  limit: number,
  offset: number,
): Promise<LlamadaRow[]> {
  const page = pages[f.end === null ? 0 : 1]![f.resultado === null ? 0 : 1]!;
  return page(db, { clinicId, start: f.start, end: f.end ?? 0, resultado: f.resultado ?? '', limit, offset });
}

type CountValues = { clinicId: string; desde: string; hasta: string; resultado: string };
const COUNT_VALUES = ['clinicId', 'desde', 'hasta', 'resultado'] as const;

function countQuery(db: Kysely<DB>, p: CountValues, bounded: boolean, byResultado: boolean) {
  let q = db
    .selectFrom('llamadas_por_dia')
    .select((eb) => eb.fn.sum<number | string | null>('n').as('total'))
    .where('clinic_id', '=', p.clinicId)
    .where('dia', '>=', p.desde);
  if (bounded) q = q.where('dia', '<=', p.hasta);
  if (byResultado) q = q.where('resultado', '=', p.resultado);
  return q;
}

const counts = [false, true].map((bounded) =>
  [false, true].map((byResultado) => compiledOnce(COUNT_VALUES, (db, p: CountValues) => countQuery(db, p, bounded, byResultado))),
);

export async function countLlamadas(db: Kysely<DB>, clinicId: string, f: LlamadasFilter): Promise<number> {
  const count = counts[f.hasta === null ? 0 : 1]![f.resultado === null ? 0 : 1]!;
  const [row] = await count(db, { clinicId, desde: f.desde, hasta: f.hasta ?? '', resultado: f.resultado ?? '' });
  return Number(row?.total ?? 0);
}

// updated_since: the (clinic_id, updated_at, id) index in order (named on SQLite, as for citas).

type ChangedValues = { clinicId: string; since: number; start: number; end: number; resultado: string; limit: number; offset: number };
const CHANGED_VALUES = ['clinicId', 'since', 'start', 'end', 'resultado', 'limit', 'offset'] as const;
type ChangedShape = { start: boolean; end: boolean; resultado: boolean };

function changedBase(db: Kysely<DB>, p: ChangedValues, s: ChangedShape): From {
  let q = llamadasFrom(db, 'llamadas_by_updated').where('l.clinic_id', '=', p.clinicId).where('l.updated_at', '>=', p.since);
  if (s.start) q = q.where('l.fecha_hora', '>=', p.start);
  if (s.end) q = q.where('l.fecha_hora', '<', p.end);
  if (s.resultado) q = q.where('l.resultado', '=', p.resultado);
  return q;
}

// One compiled-once query per shape (8), built on first use.
const changedPage = perShape((s: ChangedShape) =>
  compiledOnce(CHANGED_VALUES, (db, p: ChangedValues) =>
    withCaller(changedBase(db, p, s))
      .orderBy('l.updated_at')
      .orderBy('l.id')
      .limit(p.limit)
      .offset(p.offset),
  ),
);
const changedCount = perShape((s: ChangedShape) =>
  compiledOnce(CHANGED_VALUES, (db, p: ChangedValues) =>
    changedBase(db, p, s).select((eb) => eb.fn.countAll<number | string>().as('total')),
  ),
);

function changedValues(clinicId: string, f: LlamadasChangedFilter, limit: number, offset: number): [ChangedShape, ChangedValues] {
  return [
    { start: f.start !== null, end: f.end !== null, resultado: f.resultado !== null },
    { clinicId, since: f.since, start: f.start ?? 0, end: f.end ?? 0, resultado: f.resultado ?? '', limit, offset },
  ];
}

/** A page of calls changed at or after `since`, ordered by (updated_at, id). */
export async function listChangedLlamadas(
  db: Kysely<DB>,
  clinicId: string,
  f: LlamadasChangedFilter,
  limit: number,
  offset: number,
): Promise<LlamadaRow[]> {
  const [shape, values] = changedValues(clinicId, f, limit, offset);
  return changedPage(shape)(db, values);
}

export async function countChangedLlamadas(db: Kysely<DB>, clinicId: string, f: LlamadasChangedFilter): Promise<number> {
  const [shape, values] = changedValues(clinicId, f, 0, 0);
  const [row] = await changedCount(shape)(db, values);
  return Number(row?.total ?? 0);
}

/**
 * The calls of `ids` as the API shows them, each with whether it waits for its clienta: linked to
 * a clienta that is not stored yet (an import may list her later), its name is not known yet.
 */
export async function llamadasByIds(
  db: Kysely<DB>,
  clinicId: string,
  ids: readonly string[],
): Promise<(LlamadaRow & { awaitingClienta: boolean })[]> {
  if (ids.length === 0) return [];
  // PostgreSQL: the calls first, by primary key, then their clientas (see citasByIds).
  const from =
    dialectOf(db) === 'postgres'
      ? (db
          .with(
            (cte) => cte('l').materialized(),
            (qb) =>
              qb
                .selectFrom('llamadas')
                .selectAll()
                .where('clinic_id', '=', clinicId)
                .where(inIds(db, 'id', ids)),
          )
          .selectFrom('l') as unknown as From)
      : db
          .selectFrom('llamadas as l')
          .where('l.clinic_id', '=', clinicId)
          .where(inIds(db, 'l.id', ids));
  const rows = await withCaller(from).select(['l.clienta_id', 'cl.id as clienta_found']).execute();
  return rows.map(({ clienta_id, clienta_found, ...row }) => ({ ...row, awaitingClienta: clienta_id !== null && clienta_found === null }));
}
