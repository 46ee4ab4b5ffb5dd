// What the clinic's export reads (services/exports/clinic.ts): each table's rows as stored, in
// the import format's fields, a page at a time after the last id of the page before (keyset on
// the primary key (clinic_id, id): constant memory, and each page one index range).
import type { Kysely } from 'kysely';
import type { DB } from '../db/schema.js';

export const clientaPage = (db: Kysely<DB>, clinicId: string, afterId: string | null, limit: number) => {
  let q = db
    .selectFrom('clientas')
    .select(['id', 'nombre', 'telefono', 'email', 'idioma', 'vip', 'cliente_desde', 'created_at'])
    .where('clinic_id', '=', clinicId);
  if (afterId !== null) q = q.where('id', '>', afterId);
  return q.orderBy('id').limit(limit).execute();
};

export const citaPage = (db: Kysely<DB>, clinicId: string, afterId: string | null, limit: number) => {
  let q = db
    .selectFrom('citas')
    .select([
      'id',
      'clienta_id',
      'fecha_hora',
      'servicio',
      'duracion_min',
      'precio_cents',
      'estado',
      'profesional_nombre',
      'sede_nombre',
      'notas',
      'created_at',
    ])
    .where('clinic_id', '=', clinicId);
  if (afterId !== null) q = q.where('id', '>', afterId);
  return q.orderBy('id').limit(limit).execute();
};

export const llamadaPage = (db: Kysely<DB>, clinicId: string, afterId: string | null, limit: number) => {
  let q = db
    .selectFrom('llamadas')
    .select([
      'id',
      'clienta_id',
      'fecha_hora',
      'cliente_nombre',
      'telefono_caller',
      'duracion_segundos',
      'resultado',
      'idioma',
      'created_at',
    ])
    .where('clinic_id', '=', clinicId);
  if (afterId !== null) q = q.where('id', '>', afterId);
  return q.orderBy('id').limit(limit).execute();
};

/** The clinic's records per table (each an index-only count of its primary key range). */
export async function recordCounts(db: Kysely<DB>, clinicId: string): Promise<{ clientas: number; citas: number; llamadas: number }> {
  const count = async (table: 'clientas' | 'citas' | 'llamadas') => {
    const row = await db
      .selectFrom(table)
      .select((eb) => eb.fn.countAll<number | string>().as('n'))
      .where('clinic_id', '=', clinicId)
      .executeTakeFirst();
    return Number(row?.n ?? 0);
  };
  return { clientas: await count('clientas'), citas: await count('citas'), llamadas: await count('llamadas') };
}
