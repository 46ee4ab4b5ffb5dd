// Dashboard sessions. Sessions are not clinic-scoped (a superadmin's belongs to no clinic); the
// clinic is bound from the session's user instead.
import type { Kysely, Selectable } from 'kysely';
import type { DashboardSessionsTable, DB } from '../db/schema.js';

export type SessionRow = Selectable<DashboardSessionsTable>;

export interface SessionWithUser extends SessionRow {
  email: string;
  role: string;
  clinic_id: string | null;
}

export async function insertSession(db: Kysely<DB>, row: SessionRow): Promise<void> {
  await db.insertInto('dashboard_sessions').values(row).execute();
}

export async function getSessionWithUser(db: Kysely<DB>, id: string): Promise<SessionWithUser | undefined> {
  return db
    .selectFrom('dashboard_sessions as s')
    .innerJoin('users as u', 'u.id', 's.user_id')
    .select([
      's.id',
      's.user_id',
      's.created_at',
      's.last_seen_at',
      's.expires_at',
      's.flash',
      's.lang',
      'u.email',
      'u.role',
      'u.clinic_id',
    ])
    .where('s.id', '=', id)
    .executeTakeFirst();
}

export async function touchSession(db: Kysely<DB>, id: string, at: number): Promise<void> {
  await db.updateTable('dashboard_sessions').set({ last_seen_at: at }).where('id', '=', id).execute();
}

export async function setSessionFlash(db: Kysely<DB>, id: string, flash: string | null): Promise<void> {
  await db.updateTable('dashboard_sessions').set({ flash }).where('id', '=', id).execute();
}

/** Clears the flash only if it is still the one read, so two tabs cannot both show it. */
export async function takeSessionFlash(db: Kysely<DB>, id: string, flash: string): Promise<boolean> {
  const res = await db
    .updateTable('dashboard_sessions')
    .set({ flash: null })
    .where('id', '=', id)
    .where('flash', '=', flash)
    .executeTakeFirst();
  return Number(res.numUpdatedRows) > 0;
}

export async function deleteSession(db: Kysely<DB>, id: string): Promise<void> {
  await db.deleteFrom('dashboard_sessions').where('id', '=', id).execute();
}

/** Deletes sessions past their absolute expiry or idle for longer than `idleSeconds`. */
export async function deleteExpiredSessions(db: Kysely<DB>, nowS: number, idleSeconds: number): Promise<void> {
  await db
    .deleteFrom('dashboard_sessions')
    .where((eb) => eb.or([eb('expires_at', '<=', nowS), eb('last_seen_at', '<=', nowS - idleSeconds)]))
    .execute();
}

/** Ends every dashboard session of the user (a password reset); how many there were. */
export async function deleteUserSessions(db: Kysely<DB>, userId: string): Promise<number> {
  const res = await db.deleteFrom('dashboard_sessions').where('user_id', '=', userId).executeTakeFirst();
  return Number(res.numDeletedRows);
}
