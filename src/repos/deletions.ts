// Deletions (import lines with "deleted": true) and the changes a clienta's rows cause in her
// citas and calls: her deletion deletes her citas and unlinks her calls, her new name or phone
// moves their updated_at. Each returns what the count deltas and the events need; ids are at
// most a chunk (services/write/). Callers run these inside the writing transaction.
import type { ReferringName } from '../collections/index.js';
import type { Kysely } from 'kysely';
import { inIds } from '../db/in-ids.js';
import type { DB } from '../db/schema.js';

export async function deleteCitas(db: Kysely<DB>, clinicId: string, ids: string[]) {
  if (ids.length === 0) return [];
  return db
    .deleteFrom('citas')
    .where('clinic_id', '=', clinicId)
    .where(inIds(db, 'id', ids))
    .returning(['id', 'dia', 'estado'])
    .execute();
}

export async function deleteLlamadas(db: Kysely<DB>, clinicId: string, ids: string[]) {
  if (ids.length === 0) return [];
  return db
    .deleteFrom('llamadas')
    .where('clinic_id', '=', clinicId)
    .where(inIds(db, 'id', ids))
    .returning(['id', 'dia', 'resultado'])
    .execute();
}

export async function deleteClientas(db: Kysely<DB>, clinicId: string, ids: string[]) {
  if (ids.length === 0) return [];
  return db
    .deleteFrom('clientas')
    .where('clinic_id', '=', clinicId)
    .where(inIds(db, 'id', ids))
    .returning(['id', 'vip'])
    .execute();
}

/** Which of `ids` are clientas of this clinic. */
export async function storedClientaIds(db: Kysely<DB>, clinicId: string, ids: string[]): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const rows = await db
    .selectFrom('clientas')
    .select('id')
    .where('clinic_id', '=', clinicId)
    .where(inIds(db, 'id', ids))
    .execute();
  return new Set(rows.map((r) => r.id));
}

/** A deleted clienta's citas go with her. */
export async function deleteCitasOf(db: Kysely<DB>, clinicId: string, clientaIds: string[]) {
  if (clientaIds.length === 0) return [];
  return db
    .deleteFrom('citas')
    .where('clinic_id', '=', clinicId)
    .where(inIds(db, 'clienta_id', clientaIds))
    .returning(['id', 'dia', 'estado'])
    .execute();
}

/** A deleted clienta's calls stay, as calls of an unknown caller (no link, no recorded name). */
export async function unlinkLlamadasOf(db: Kysely<DB>, clinicId: string, clientaIds: string[], updatedAt: number): Promise<string[]> {
  if (clientaIds.length === 0) return [];
  const rows = await db
    .updateTable('llamadas')
    .set({ clienta_id: null, cliente_nombre: null, updated_at: updatedAt })
    .where('clinic_id', '=', clinicId)
    .where(inIds(db, 'clienta_id', clientaIds))
    .returning('id')
    .execute();
  return rows.map((r) => r.id);
}

/**
 * The citas (or calls) of clientas whose name or phone (or name) changed: what the API shows of
 * them changed too, so their updated_at moves. Returns their ids.
 */
export async function touchRecordsOf(
  db: Kysely<DB>,
  table: ReferringName,
  clinicId: string,
  clientaIds: string[],
  updatedAt: number,
): Promise<string[]> {
  if (clientaIds.length === 0) return [];
  const rows = await db
    .updateTable(table)
    .set({ updated_at: updatedAt })
    .where('clinic_id', '=', clinicId)
    .where(inIds(db, 'clienta_id', clientaIds))
    .returning('id')
    .execute();
  return rows.map((r) => r.id);
}
