// Call queries, newest first. Indexes: (clinic_id, fecha_hora, id), (clinic_id, resultado, fecha_hora, id).
import { sql, type Kysely } from 'kysely';
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

export async function listLlamadas(
  db: Kysely<DB>,
  clinicId: string,
  f: LlamadasFilter,
  limit: number,
  offset: number,
): Promise<LlamadaRow[]> {
  // SQLite: pinned for the same reason as in citas.ts (its planner cannot tell the two indexes apart).
  const from = f.resultado !== null && dialectOf(db) === 'sqlite'
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
    .where('l.clinic_id', '=', clinicId)
    .where('l.fecha_hora', '>=', f.start);
  if (f.end !== null) q = q.where('l.fecha_hora', '<', f.end);
  if (f.resultado !== null) q = q.where('l.resultado', '=', f.resultado);
  return q.orderBy('l.fecha_hora', 'desc').orderBy('l.id', 'desc').limit(limit).offset(offset).execute();
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
