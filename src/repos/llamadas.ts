// Call queries, newest first. Indexes: (clinic_id, fecha_hora, id), (clinic_id, resultado, fecha_hora, id).
import { sql, type Kysely } from 'kysely';
import { compiledOnce } from '../db/compiled-once.js';
import { dialectOf } from '../db/dialect.js';
import type { DB, LlamadasTable } from '../db/schema.js';

export interface LlamadasFilter {
  start: number;
  /** null: no upper bound */
  end: number | null;
  desde: string;
  hasta: string | null;
  resultado: string | null;
}

/** A page row: cliente_nombre is the linked client's current name, else what was recorded. */
export type LlamadaRow = Pick<
  LlamadasTable,
  'id' | 'fecha_hora' | 'cliente_nombre' | 'telefono_caller' | 'duracion_segundos' | 'resultado' | 'idioma' | 'created_at'
>;

type PageValues = { clinicId: string; start: number; end: number; resultado: string; limit: number; offset: number };
const PAGE_VALUES = ['clinicId', 'start', 'end', 'resultado', 'limit', 'offset'] as const;

function pageQuery(db: Kysely<DB>, p: PageValues, bounded: boolean, byResultado: boolean) {
  // SQLite: pinned for the same reason as in citas.ts (its planner cannot tell the two indexes apart).
  const from = byResultado && dialectOf(db) === 'sqlite'
    ? db.selectFrom(sql<LlamadasTable>`llamadas`.as<'l'>(sql`l indexed by llamadas_by_resultado_time`))
    : db.selectFrom('llamadas as l');
  let q = from
    .leftJoin('clientas as cl', (j) => j.onRef('cl.clinic_id', '=', 'l.clinic_id').onRef('cl.id', '=', 'l.clienta_id'))
    .select((eb) => [
      'l.id', 'l.fecha_hora',
      // A linked caller shows the client's current name; an unknown caller keeps what was recorded.
      eb.fn.coalesce('cl.nombre', 'l.cliente_nombre').as('cliente_nombre'),
      'l.telefono_caller', 'l.duracion_segundos', 'l.resultado', 'l.idioma', 'l.created_at',
    ])
    .where('l.clinic_id', '=', p.clinicId)
    .where('l.fecha_hora', '>=', p.start);
  if (bounded) q = q.where('l.fecha_hora', '<', p.end);
  if (byResultado) q = q.where('l.resultado', '=', p.resultado);
  return q.orderBy('l.fecha_hora', 'desc').orderBy('l.id', 'desc').limit(p.limit).offset(p.offset);
}

/** One compiled-once query per shape: [bounded][byResultado]. */
const pages = [false, true].map((bounded) => [false, true].map((byResultado) =>
  compiledOnce(PAGE_VALUES, (db, p: PageValues) => pageQuery(db, p, bounded, byResultado))));

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

const counts = [false, true].map((bounded) => [false, true].map((byResultado) =>
  compiledOnce(COUNT_VALUES, (db, p: CountValues) => countQuery(db, p, bounded, byResultado))));

export async function countLlamadas(db: Kysely<DB>, clinicId: string, f: LlamadasFilter): Promise<number> {
  const count = counts[f.hasta === null ? 0 : 1]![f.resultado === null ? 0 : 1]!;
  const [row] = await count(db, { clinicId, desde: f.desde, hasta: f.hasta ?? '', resultado: f.resultado ?? '' });
  return Number(row?.total ?? 0);
}
