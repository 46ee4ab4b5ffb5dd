// API keys. Every query names the clinic, except the two that cannot: the look-up of a presented
// key by its hash (the key is what tells the clinic) and the operator's locateApiKey.
import type { Kysely, Selectable } from 'kysely';
import type { ApiKeysTable, DB } from '../db/schema.js';

export type ApiKeyRow = Selectable<ApiKeysTable>;

export async function insertApiKey(db: Kysely<DB>, row: ApiKeyRow): Promise<void> {
  await db.insertInto('api_keys').values(row).execute();
}

export async function findApiKeyByHash(db: Kysely<DB>, keyHash: string): Promise<ApiKeyRow | undefined> {
  return db.selectFrom('api_keys').selectAll().where('key_hash', '=', keyHash).executeTakeFirst();
}

export async function getApiKey(db: Kysely<DB>, clinicId: string, id: string): Promise<ApiKeyRow | undefined> {
  return db.selectFrom('api_keys').selectAll().where('clinic_id', '=', clinicId).where('id', '=', id).executeTakeFirst();
}

/** Operator-scoped, across clinics: the clinic a key id belongs to (the CLI's `keys revoke KEY_ID`). */
export async function locateApiKey(db: Kysely<DB>, id: string): Promise<string | undefined> {
  return (await db.selectFrom('api_keys').select('clinic_id').where('id', '=', id).executeTakeFirst())?.clinic_id;
}

export type ApiKeyListing = Omit<ApiKeyRow, 'key_hash'> & { created_by_email: string | null };

/** The clinic's keys, newest first, without their hashes. */
export async function listApiKeys(db: Kysely<DB>, clinicId: string): Promise<ApiKeyListing[]> {
  return db
    .selectFrom('api_keys as k')
    .leftJoin('users as u', 'u.id', 'k.created_by')
    .select([
      'k.id',
      'k.clinic_id',
      'k.name',
      'k.hint',
      'k.created_by',
      'k.created_at',
      'k.expires_at',
      'k.revoked_at',
      'k.last_used_at',
      'u.email as created_by_email',
    ])
    .where('k.clinic_id', '=', clinicId)
    .orderBy('k.created_at', 'desc')
    .orderBy('k.id', 'desc')
    .execute();
}

/** Marks the key revoked; returns false when it does not exist or was already revoked. */
export async function revokeApiKey(db: Kysely<DB>, clinicId: string, id: string, at: number): Promise<boolean> {
  const res = await db
    .updateTable('api_keys')
    .set({ revoked_at: at })
    .where('clinic_id', '=', clinicId)
    .where('id', '=', id)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  return Number(res.numUpdatedRows) > 0;
}

export async function touchApiKeys(db: Kysely<DB>, ids: string[], at: number): Promise<void> {
  if (ids.length === 0) return;
  await db.updateTable('api_keys').set({ last_used_at: at }).where('id', 'in', ids).execute();
}
