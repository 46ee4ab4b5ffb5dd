// Bulk writes used by import and demo generation: upserts by (clinic_id, id), then a refresh
// of the per-day counts. Callers run these inside one transaction.
import { sql, type Insertable, type Kysely } from 'kysely';
import type { CitasTable, ClientasTable, DB, LlamadasTable } from '../db/schema.js';

/** Rows per INSERT: keeps every statement under both databases' bound-parameter limits. */
export const WRITE_BATCH = 500;

type Row<T> = Insertable<T>;

function updateAll<T extends object>(columns: (keyof T & string)[]) {
  return (eb: { ref: (c: string) => unknown }) =>
    Object.fromEntries(columns.map((c) => [c, eb.ref(`excluded.${c}`)])) as never;
}

const CLIENTA_COLUMNS: (keyof ClientasTable & string)[] = [
  'nombre', 'nombre_norm', 'telefono', 'telefono_digits', 'email', 'idioma', 'vip', 'cliente_desde', 'created_at',
];
const CITA_COLUMNS: (keyof CitasTable & string)[] = [
  'clienta_id', 'fecha_hora', 'dia', 'servicio', 'duracion_min', 'precio_cents', 'estado',
  'profesional_nombre', 'sede_nombre', 'notas', 'created_at',
];
const LLAMADA_COLUMNS: (keyof LlamadasTable & string)[] = [
  'clienta_id', 'fecha_hora', 'dia', 'cliente_nombre', 'telefono_caller', 'duracion_segundos', 'resultado', 'idioma', 'created_at',
];

export async function upsertClientas(db: Kysely<DB>, rows: Row<ClientasTable>[]): Promise<void> {
  for (let i = 0; i < rows.length; i += WRITE_BATCH) {
    await db.insertInto('clientas').values(rows.slice(i, i + WRITE_BATCH))
      .onConflict((oc) => oc.columns(['clinic_id', 'id']).doUpdateSet(updateAll<ClientasTable>(CLIENTA_COLUMNS)))
      .execute();
  }
}

export async function upsertCitas(db: Kysely<DB>, rows: Row<CitasTable>[]): Promise<void> {
  for (let i = 0; i < rows.length; i += WRITE_BATCH) {
    await db.insertInto('citas').values(rows.slice(i, i + WRITE_BATCH))
      .onConflict((oc) => oc.columns(['clinic_id', 'id']).doUpdateSet(updateAll<CitasTable>(CITA_COLUMNS)))
      .execute();
  }
}

export async function upsertLlamadas(db: Kysely<DB>, rows: Row<LlamadasTable>[]): Promise<void> {
  for (let i = 0; i < rows.length; i += WRITE_BATCH) {
    await db.insertInto('llamadas').values(rows.slice(i, i + WRITE_BATCH))
      .onConflict((oc) => oc.columns(['clinic_id', 'id']).doUpdateSet(updateAll<LlamadasTable>(LLAMADA_COLUMNS)))
      .execute();
  }
}

/** Which of `ids` are clientas of this clinic. */
export async function existingClientaIds(db: Kysely<DB>, clinicId: string, ids: string[]): Promise<Set<string>> {
  const found = new Set<string>();
  for (let i = 0; i < ids.length; i += WRITE_BATCH) {
    const rows = await db.selectFrom('clientas').select('id')
      .where('clinic_id', '=', clinicId).where('id', 'in', ids.slice(i, i + WRITE_BATCH)).execute();
    for (const r of rows) found.add(r.id);
  }
  return found;
}

/** Recomputes the clinic's per-day and per-vip counts from the rows themselves. */
export async function refreshCounts(db: Kysely<DB>, clinicId: string): Promise<void> {
  await db.deleteFrom('citas_por_dia').where('clinic_id', '=', clinicId).execute();
  await db.deleteFrom('llamadas_por_dia').where('clinic_id', '=', clinicId).execute();
  await db.deleteFrom('clientas_por_vip').where('clinic_id', '=', clinicId).execute();
  await sql`insert into citas_por_dia (clinic_id, dia, estado, n)
    select clinic_id, dia, estado, count(*) from citas where clinic_id = ${clinicId} group by clinic_id, dia, estado`.execute(db);
  await sql`insert into llamadas_por_dia (clinic_id, dia, resultado, n)
    select clinic_id, dia, resultado, count(*) from llamadas where clinic_id = ${clinicId} group by clinic_id, dia, resultado`.execute(db);
  await sql`insert into clientas_por_vip (clinic_id, vip, n)
    select clinic_id, vip, count(*) from clientas where clinic_id = ${clinicId} group by clinic_id, vip`.execute(db);
}
