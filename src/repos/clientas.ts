// Client queries. Ordering is (nombre_norm, id), served by (clinic_id, nombre_norm, id, +telefono_digits)
// and (clinic_id, vip, nombre_norm, id, +telefono_digits). Derived fields are computed for the page
// only, each by an index seek on (clinic_id, clienta_id, fecha_hora) of citas and llamadas.
// A search (`q`) finds its page's ids through repos/clientas-search.ts, then reads them here.
import type { Kysely } from 'kysely';
import type { DB } from '../db/schema.js';
import { inIds } from '../db/in-ids.js';

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
  updated_at: number;
  total_citas: number;
  total_llamadas: number;
  ultima_cita: number | null;
  ultima_llamada: number | null;
}

/** The API's columns of a client, derived fields included (each an index seek): one list for every reader. */
export function withDerived(db: Kysely<DB>, clinicId: string, nowSeconds: number) {
  return db
    .selectFrom('clientas as c')
    .where('c.clinic_id', '=', clinicId)
    .select((eb) => [
      'c.id',
      'c.nombre',
      'c.telefono',
      'c.email',
      'c.idioma',
      'c.vip',
      'c.cliente_desde',
      'c.created_at',
      'c.updated_at',
      eb
        .selectFrom('citas as ci')
        .select((e) => e.fn.countAll<number>().as('n'))
        .whereRef('ci.clinic_id', '=', 'c.clinic_id')
        .whereRef('ci.clienta_id', '=', 'c.id')
        .as('total_citas'),
      eb
        .selectFrom('llamadas as l')
        .select((e) => e.fn.countAll<number>().as('n'))
        .whereRef('l.clinic_id', '=', 'c.clinic_id')
        .whereRef('l.clienta_id', '=', 'c.id')
        .as('total_llamadas'),
      eb
        .selectFrom('citas as ci')
        .select((e) => e.fn.max<number | null>('ci.fecha_hora').as('m'))
        .whereRef('ci.clinic_id', '=', 'c.clinic_id')
        .whereRef('ci.clienta_id', '=', 'c.id')
        .where('ci.fecha_hora', '<=', nowSeconds)
        .as('ultima_cita'),
      eb
        .selectFrom('llamadas as l')
        .select((e) => e.fn.max<number | null>('l.fecha_hora').as('m'))
        .whereRef('l.clinic_id', '=', 'c.clinic_id')
        .whereRef('l.clienta_id', '=', 'c.id')
        .as('ultima_llamada'),
    ]);
}

/** A page of the clinic's clientas in name order, without a search. */
export async function listClientas(
  db: Kysely<DB>,
  clinicId: string,
  vip: boolean | null,
  limit: number,
  offset: number,
  nowSeconds: number,
): Promise<ClientaRow[]> {
  let q = withDerived(db, clinicId, nowSeconds);
  if (vip !== null) q = q.where('c.vip', '=', vip ? 1 : 0);
  return q.orderBy('c.nombre_norm').orderBy('c.id').limit(limit).offset(offset).execute() as Promise<ClientaRow[]>;
}

/** The rows of a search's page, in the order of `ids`. */
export async function clientasByIds(db: Kysely<DB>, clinicId: string, ids: string[], nowSeconds: number): Promise<ClientaRow[]> {
  if (ids.length === 0) return [];
  // Primary-key look-ups, put back in the page's order here: with an ORDER BY, SQLite would
  // rather walk the clinic's whole name index than sort a page.
  const rows = (await withDerived(db, clinicId, nowSeconds)
    .where(inIds(db, 'c.id', ids))
    .execute()) as ClientaRow[];
  const at = new Map(ids.map((id, i) => [id, i]));
  return rows.sort((a, b) => at.get(a.id)! - at.get(b.id)!);
}

/** What a cita and a call show of their clientas `ids` (name and phone as stored now): an id missing is not stored. */
export async function clientaNames(
  db: Kysely<DB>,
  clinicId: string,
  ids: readonly string[],
): Promise<Map<string, { nombre: string; telefono: string }>> {
  const out = new Map<string, { nombre: string; telefono: string }>();
  if (ids.length === 0) return out;
  const rows = await db
    .selectFrom('clientas')
    .select(['id', 'nombre', 'telefono'])
    .where('clinic_id', '=', clinicId)
    .where(inIds(db, 'id', ids))
    .execute();
  for (const r of rows) out.set(r.id, { nombre: r.nombre, telefono: r.telefono });
  return out;
}

/** The clinic's clientas in a vip scope (null: all), from the per-clinic counts. */
export async function countClientas(db: Kysely<DB>, clinicId: string, vip: boolean | null): Promise<number> {
  let q = db
    .selectFrom('clientas_por_vip')
    .select((eb) => eb.fn.sum<number | string | null>('n').as('total'))
    .where('clinic_id', '=', clinicId);
  if (vip !== null) q = q.where('vip', '=', vip ? 1 : 0);
  const row = await q.executeTakeFirst();
  return Number(row?.total ?? 0);
}
