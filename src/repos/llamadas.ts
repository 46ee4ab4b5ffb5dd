// Call queries, newest first. Indexes: (clinic_id, fecha_hora, id), (clinic_id, resultado,
// fecha_hora, id) and, for updated_since, (clinic_id, updated_at, id).
import type { Kysely, SelectQueryBuilder } from 'kysely';
import { dialectOf } from '../db/dialect.js';
import { indexedBy } from '../db/indexed-by.js';
import type { DB, LlamadasTable } from '../db/schema.js';
import { inIds } from '../db/in-ids.js';
import { clientasJoined } from './clienta-join.js';

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
> & { /** not shown: whom the row discloses (the access record); null for an unknown caller */ clienta_id: string | null };

// `{}`: Kysely's type of a query with nothing selected yet.
// eslint-disable-next-line @typescript-eslint/no-empty-object-type
type From = SelectQueryBuilder<DB & { l: LlamadasTable }, 'l', {}>;

/** `llamadas as l`, or with its index named on SQLite (its planner cannot tell the indexes apart). */
function llamadasFrom(db: Kysely<DB>, index: string | null): From {
  return index !== null
    ? (db.selectFrom(indexedBy<LlamadasTable, 'l'>(db, 'llamadas', 'l', index)) as unknown as From)
    : db.selectFrom('llamadas as l');
}

/** The API's columns of a call: one list for every reader. */
function withCaller(db: Kysely<DB>, from: From) {
  return from
    .leftJoin(clientasJoined(db), (j) => j.onRef('cl.clinic_id', '=', 'l.clinic_id').onRef('cl.id', '=', 'l.clienta_id'))
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
      'l.clienta_id',
    ]);
}

export async function listLlamadas(
  db: Kysely<DB>,
  clinicId: string,
  f: LlamadasFilter,
  limit: number,
  offset: number,
): Promise<LlamadaRow[]> {
  let q = llamadasFrom(db, f.resultado !== null ? 'llamadas_by_resultado_time' : null)
    .where('l.clinic_id', '=', clinicId)
    .where('l.fecha_hora', '>=', f.start);
  if (f.end !== null) q = q.where('l.fecha_hora', '<', f.end);
  if (f.resultado !== null) q = q.where('l.resultado', '=', f.resultado);
  return withCaller(db, q).orderBy('l.fecha_hora', 'desc').orderBy('l.id', 'desc').limit(limit).offset(offset).execute();
}

export async function countLlamadas(db: Kysely<DB>, clinicId: string, f: LlamadasFilter): Promise<number> {
  let q = db
    .selectFrom('llamadas_por_dia')
    .select((eb) => eb.fn.sum<number | string | null>('n').as('total'))
    .where('clinic_id', '=', clinicId)
    .where('dia', '>=', f.desde);
  if (f.hasta !== null) q = q.where('dia', '<=', f.hasta);
  if (f.resultado !== null) q = q.where('resultado', '=', f.resultado);
  const row = await q.executeTakeFirst();
  return Number(row?.total ?? 0);
}

// updated_since: the (clinic_id, updated_at, id) index in order (named on SQLite, as for appointments).
function changed(db: Kysely<DB>, clinicId: string, f: LlamadasChangedFilter): From {
  let q = llamadasFrom(db, 'llamadas_by_updated').where('l.clinic_id', '=', clinicId).where('l.updated_at', '>=', f.since);
  if (f.start !== null) q = q.where('l.fecha_hora', '>=', f.start);
  if (f.end !== null) q = q.where('l.fecha_hora', '<', f.end);
  if (f.resultado !== null) q = q.where('l.resultado', '=', f.resultado);
  return q;
}

/** A page of calls changed at or after `since`, ordered by (updated_at, id). */
export async function listChangedLlamadas(
  db: Kysely<DB>,
  clinicId: string,
  f: LlamadasChangedFilter,
  limit: number,
  offset: number,
): Promise<LlamadaRow[]> {
  return withCaller(db, changed(db, clinicId, f))
    .orderBy('l.updated_at')
    .orderBy('l.id')
    .limit(limit)
    .offset(offset)
    .execute();
}

export async function countChangedLlamadas(db: Kysely<DB>, clinicId: string, f: LlamadasChangedFilter): Promise<number> {
  const row = await changed(db, clinicId, f)
    .select((eb) => eb.fn.countAll<number | string>().as('total'))
    .executeTakeFirst();
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
  const rows = await withCaller(db, from).select(['cl.id as clienta_found']).execute();
  return rows.map(({ clienta_found, ...row }) => ({ ...row, awaitingClienta: row.clienta_id !== null && clienta_found === null }));
}
