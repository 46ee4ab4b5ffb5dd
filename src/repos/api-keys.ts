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
      'k.scopes',
      'k.allowed_ips',
      'k.replaced_by',
      'k.mode',
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

export type ApiKeyChanges = Partial<Pick<ApiKeyRow, 'name' | 'scopes' | 'allowed_ips'>>;

/**
 * A live key's name, scopes and addresses (only the fields given); false when it is unknown,
 * another clinic's, revoked or rolled (a rolled key follows its replacement: keys given in
 * `followers` are changed with it, in the caller's transaction).
 */
export async function updateApiKey(db: Kysely<DB>, clinicId: string, id: string, changes: ApiKeyChanges): Promise<boolean> {
  if (Object.keys(changes).length === 0) {
    const k = await getApiKey(db, clinicId, id);
    return k !== undefined && k.revoked_at === null && k.replaced_by === null;
  }
  const res = await db
    .updateTable('api_keys')
    .set(changes)
    .where('clinic_id', '=', clinicId)
    .where('id', '=', id)
    .where('revoked_at', 'is', null)
    .where('replaced_by', 'is', null)
    .executeTakeFirst();
  return Number(res.numUpdatedRows) > 0;
}

/** The same change on a rolled key's live predecessors (`ids`, from livePredecessors). */
export async function updateFollowers(db: Kysely<DB>, clinicId: string, ids: readonly string[], changes: ApiKeyChanges): Promise<void> {
  if (ids.length === 0 || Object.keys(changes).length === 0) return;
  await db
    .updateTable('api_keys')
    .set(changes)
    .where('clinic_id', '=', clinicId)
    .where('id', 'in', [...ids])
    .where('revoked_at', 'is', null)
    .execute();
}

/** Revokes a rolled key's live predecessors (`ids`, from livePredecessors) with it. */
export async function revokeFollowers(db: Kysely<DB>, clinicId: string, ids: readonly string[], at: number): Promise<void> {
  if (ids.length === 0) return;
  await db
    .updateTable('api_keys')
    .set({ revoked_at: at })
    .where('clinic_id', '=', clinicId)
    .where('id', 'in', [...ids])
    .where('revoked_at', 'is', null)
    .execute();
}

/** How many rolls back a chain is followed, at most (each roll of a key within a week adds one). */
const MAX_CHAIN = 100;

/**
 * The keys `id` replaced that still work at `nowS` (in their roll's overlap): the one it replaced
 * directly and, if that one was itself rolled from a key still in its overlap, that key too, and
 * so on (usually none or one). A rolled key ends at most `maxOverlapS` after its roll, so only
 * keys ending after `nowS - maxOverlapS` can lie between a live predecessor and `id`: the walk
 * goes through those (revoked or ended ones included) and no further back.
 */
export async function livePredecessors(db: Kysely<DB>, clinicId: string, id: string, nowS: number, maxOverlapS: number): Promise<string[]> {
  const live: string[] = [];
  const seen = new Set([id]);
  let next = [id];
  for (let depth = 0; next.length > 0 && depth < MAX_CHAIN; depth++) {
    const rows = await db
      .selectFrom('api_keys')
      .select(['id', 'revoked_at', 'expires_at'])
      .where('clinic_id', '=', clinicId)
      .where('replaced_by', 'in', next)
      .where('expires_at', '>', nowS - maxOverlapS)
      .execute();
    next = rows.filter((r) => !seen.has(r.id)).map((r) => r.id);
    for (const r of rows) {
      seen.add(r.id);
      if (r.revoked_at === null && r.expires_at !== null && r.expires_at > nowS) live.push(r.id);
    }
  }
  return live;
}

/**
 * The first half of a roll, in the caller's transaction: the old key names its replacement and
 * expires at `expiresAt` (or earlier, if it already did), provided it is live at `nowS` and was
 * never rolled. One guarded UPDATE: of two rolls at once only one changes the row (on PostgreSQL
 * the second waits for the first's row lock, then finds replaced_by set). False: nothing changed.
 */
export async function markApiKeyReplaced(
  db: Kysely<DB>,
  clinicId: string,
  id: string,
  replacedBy: string,
  expiresAt: number,
  nowS: number,
): Promise<boolean> {
  const res = await db
    .updateTable('api_keys')
    .set((eb) => ({
      replaced_by: replacedBy,
      expires_at: eb.case().when('expires_at', '<', expiresAt).then(eb.ref('expires_at')).else(expiresAt).end(),
    }))
    .where('clinic_id', '=', clinicId)
    .where('id', '=', id)
    .where('revoked_at', 'is', null)
    .where('replaced_by', 'is', null)
    .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', nowS)]))
    .executeTakeFirst();
  return Number(res.numUpdatedRows) > 0;
}
