// Client queries. Ordering is (nombre_norm, id), served by (clinic_id, nombre_norm, id) and
// (clinic_id, vip, nombre_norm, id). Derived fields are computed for the page only, each by an
// index seek on (clinic_id, clienta_id, fecha_hora) of citas and llamadas.
import { sql, type Expression, type Kysely, type SqlBool } from 'kysely';
import type { DB } from '../db/schema.js';

export interface ClientasFilter {
  /** normalised (lower-case, accent-free) name substring, or null */
  nameLike: string | null;
  /** digits to find inside the phone's digits, or null */
  digitsLike: string | null;
  vip: boolean | null;
}

export interface ClientaRow {
  id: string;
  nombre: string;
  telefono: string;
  email: string | null;
  idioma: string | null;
  vip: number;
  cliente_desde: string;
  created_at: number;
  total_citas: number;
  total_llamadas: number;
  ultima_cita: number | null;
  ultima_llamada: number | null;
}

function escapeLike(s: string): string {
  return s.replace(/[\\%_]/g, (ch) => `\\${ch}`);
}

function likeContains(column: string, needle: string): Expression<SqlBool> {
  return sql<SqlBool>`${sql.ref(column)} like ${`%${escapeLike(needle)}%`} escape '\\'`;
}

function filtered(db: Kysely<DB>, clinicId: string, f: ClientasFilter) {
  let q = db.selectFrom('clientas as c').where('c.clinic_id', '=', clinicId);
  if (f.vip !== null) q = q.where('c.vip', '=', f.vip ? 1 : 0);
  if (f.nameLike !== null || f.digitsLike !== null) {
    const nameLike = f.nameLike;
    const digitsLike = f.digitsLike;
    q = q.where((eb) => {
      const ors: Expression<SqlBool>[] = [];
      if (nameLike !== null) ors.push(likeContains('c.nombre_norm', nameLike));
      if (digitsLike !== null) ors.push(likeContains('c.telefono_digits', digitsLike));
      return eb.or(ors);
    });
  }
  return q;
}

export async function listClientas(
  db: Kysely<DB>,
  clinicId: string,
  f: ClientasFilter,
  limit: number,
  offset: number,
  nowSeconds: number,
): Promise<ClientaRow[]> {
  return filtered(db, clinicId, f)
    .select((eb) => [
      'c.id', 'c.nombre', 'c.telefono', 'c.email', 'c.idioma', 'c.vip', 'c.cliente_desde', 'c.created_at',
      eb.selectFrom('citas as ci').select((e) => e.fn.countAll<number>().as('n'))
        .whereRef('ci.clinic_id', '=', 'c.clinic_id').whereRef('ci.clienta_id', '=', 'c.id')
        .as('total_citas'),
      eb.selectFrom('llamadas as l').select((e) => e.fn.countAll<number>().as('n'))
        .whereRef('l.clinic_id', '=', 'c.clinic_id').whereRef('l.clienta_id', '=', 'c.id')
        .as('total_llamadas'),
      eb.selectFrom('citas as ci').select((e) => e.fn.max<number | null>('ci.fecha_hora').as('m'))
        .whereRef('ci.clinic_id', '=', 'c.clinic_id').whereRef('ci.clienta_id', '=', 'c.id')
        .where('ci.fecha_hora', '<=', nowSeconds)
        .as('ultima_cita'),
      eb.selectFrom('llamadas as l').select((e) => e.fn.max<number | null>('l.fecha_hora').as('m'))
        .whereRef('l.clinic_id', '=', 'c.clinic_id').whereRef('l.clienta_id', '=', 'c.id')
        .as('ultima_llamada'),
    ])
    .orderBy('c.nombre_norm')
    .orderBy('c.id')
    .limit(limit)
    .offset(offset)
    .execute() as Promise<ClientaRow[]>;
}

export async function countClientas(db: Kysely<DB>, clinicId: string, f: ClientasFilter): Promise<number> {
  if (f.nameLike === null && f.digitsLike === null) {
    // Without a search, the per-clinic counts answer without touching the clientas rows.
    let q = db
      .selectFrom('clientas_por_vip')
      .select((eb) => eb.fn.sum<number | string | null>('n').as('total'))
      .where('clinic_id', '=', clinicId);
    if (f.vip !== null) q = q.where('vip', '=', f.vip ? 1 : 0);
    const row = await q.executeTakeFirst();
    return Number(row?.total ?? 0);
  }
  const row = await filtered(db, clinicId, f)
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}
