// OAuth storage: the authorization server's artifacts and the grants owners gave to apps.
// Artifacts are found by the keyed hash of their id (the id is the secret: it tells the clinic, as
// a presented API key's hash does), so those queries take no clinic id; so does the look-up of a
// grant by the id a verified token carries, the flow's own revocation (the token it revokes
// tells the grant) and the operator's locateGrant. Every other grant query names the clinic.
import type { Kysely, Selectable } from 'kysely';
import type { DB, OAuthArtifactsTable, OAuthGrantsTable } from '../db/schema.js';

export type OAuthArtifactRow = Selectable<OAuthArtifactsTable>;
export type OAuthGrantRow = Selectable<OAuthGrantsTable>;

export async function upsertArtifact(db: Kysely<DB>, row: OAuthArtifactRow): Promise<void> {
  await db
    .insertInto('oauth_artifacts')
    .values(row)
    .onConflict((oc) =>
      oc.columns(['model', 'id_hash']).doUpdateSet({
        payload: row.payload,
        grant_id: row.grant_id,
        uid_hash: row.uid_hash,
        expires_at: row.expires_at,
      }),
    )
    .execute();
}

export async function findArtifact(db: Kysely<DB>, model: string, idHash: string): Promise<OAuthArtifactRow | undefined> {
  return db.selectFrom('oauth_artifacts').selectAll().where('model', '=', model).where('id_hash', '=', idHash).executeTakeFirst();
}

export async function findArtifactByUid(db: Kysely<DB>, model: string, uidHash: string): Promise<OAuthArtifactRow | undefined> {
  return db.selectFrom('oauth_artifacts').selectAll().where('model', '=', model).where('uid_hash', '=', uidHash).executeTakeFirst();
}

export async function consumeArtifact(db: Kysely<DB>, model: string, idHash: string, at: number): Promise<void> {
  await db.updateTable('oauth_artifacts').set({ consumed_at: at }).where('model', '=', model).where('id_hash', '=', idHash).execute();
}

export async function destroyArtifact(db: Kysely<DB>, model: string, idHash: string): Promise<void> {
  await db.deleteFrom('oauth_artifacts').where('model', '=', model).where('id_hash', '=', idHash).execute();
}

/** Every token and code of a grant (of one model, or all of them). */
export async function destroyArtifactsOfGrant(db: Kysely<DB>, grantId: string, model?: string): Promise<void> {
  let q = db.deleteFrom('oauth_artifacts').where('grant_id', '=', grantId);
  if (model !== undefined) q = q.where('model', '=', model);
  await q.execute();
}

/** Removes up to `limit` artifacts expired before `nowS`; how many. */
export async function sweepExpiredArtifacts(db: Kysely<DB>, nowS: number, limit: number): Promise<number> {
  const victims = db.selectFrom('oauth_artifacts').select('id_hash').where('expires_at', '<', nowS).limit(limit);
  const res = await db.deleteFrom('oauth_artifacts').where('expires_at', '<', nowS).where('id_hash', 'in', victims).executeTakeFirst();
  return Number(res.numDeletedRows);
}

export async function insertGrant(db: Kysely<DB>, row: OAuthGrantRow): Promise<void> {
  await db.insertInto('oauth_grants').values(row).execute();
}

/** The grant a verified token names (the token tells the clinic). */
export async function findGrant(db: Kysely<DB>, id: string): Promise<OAuthGrantRow | undefined> {
  return db.selectFrom('oauth_grants').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function getGrant(db: Kysely<DB>, clinicId: string, id: string): Promise<OAuthGrantRow | undefined> {
  return db.selectFrom('oauth_grants').selectAll().where('clinic_id', '=', clinicId).where('id', '=', id).executeTakeFirst();
}

/** Operator-scoped, across clinics: the clinic a grant id belongs to (the CLI's `apps revoke GRANT_ID`). */
export async function locateGrant(db: Kysely<DB>, id: string): Promise<string | undefined> {
  return (await db.selectFrom('oauth_grants').select('clinic_id').where('id', '=', id).executeTakeFirst())?.clinic_id;
}

export type OAuthGrantListing = OAuthGrantRow & { granted_by_email: string | null };

/** The clinic's grants, newest first (revoked ones included: the page shows them apart). */
export async function listGrants(db: Kysely<DB>, clinicId: string): Promise<OAuthGrantListing[]> {
  return db
    .selectFrom('oauth_grants as g')
    .leftJoin('users as u', 'u.id', 'g.granted_by')
    .selectAll('g')
    .select('u.email as granted_by_email')
    .where('g.clinic_id', '=', clinicId)
    .orderBy('g.created_at', 'desc')
    .orderBy('g.id', 'desc')
    .execute();
}

/** Marks the grant revoked; false when it does not exist in the clinic or was revoked already. */
export async function revokeGrant(db: Kysely<DB>, clinicId: string, id: string, at: number, reason: string): Promise<boolean> {
  const res = await db
    .updateTable('oauth_grants')
    .set({ revoked_at: at, revoked_reason: reason })
    .where('clinic_id', '=', clinicId)
    .where('id', '=', id)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  return Number(res.numUpdatedRows) > 0;
}

/** The flow revoked a grant (RFC 7009, a reused refresh token or code): the token named it. */
export async function revokeGrantFromFlow(db: Kysely<DB>, id: string, at: number, reason: string): Promise<string | undefined> {
  const row = await findGrant(db, id);
  if (!row) return undefined;
  if (row.revoked_at === null) await revokeGrant(db, row.clinic_id, id, at, reason);
  return row.clinic_id;
}

/** last_used_at for grants used since the last write, in one statement per grant (a few a minute). */
export async function touchGrant(db: Kysely<DB>, clinicId: string, id: string, at: number): Promise<void> {
  await db.updateTable('oauth_grants').set({ last_used_at: at }).where('clinic_id', '=', clinicId).where('id', '=', id).execute();
}

/**
 * The live grant of one person's consent to an app for a resource in a clinic, newest first:
 * a new consent of the same person adds to it (incremental consent). By the clinic's index; a
 * clinic has a handful of grants.
 */
export async function findLiveGrantOf(
  db: Kysely<DB>,
  key: { clinicId: string; clientId: string; resource: string; grantedBy: string; mode: string },
): Promise<OAuthGrantRow | undefined> {
  return db
    .selectFrom('oauth_grants')
    .selectAll()
    .where('clinic_id', '=', key.clinicId)
    .where('client_id', '=', key.clientId)
    .where('resource', '=', key.resource)
    .where('granted_by', '=', key.grantedBy)
    .where('mode', '=', key.mode)
    .where('revoked_at', 'is', null)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .executeTakeFirst();
}

/** The scopes of a live grant, changed by a new consent; false when it ended meanwhile. */
export async function setGrantScopes(db: Kysely<DB>, clinicId: string, id: string, scopes: string): Promise<boolean> {
  const res = await db
    .updateTable('oauth_grants')
    .set({ scopes })
    .where('clinic_id', '=', clinicId)
    .where('id', '=', id)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  return Number(res.numUpdatedRows) > 0;
}
