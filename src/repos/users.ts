import type { Kysely, Selectable } from 'kysely';
import type { DB, UsersTable } from '../db/schema.js';

export type User = Selectable<UsersTable>;

export async function insertUser(db: Kysely<DB>, user: User): Promise<void> {
  await db.insertInto('users').values(user).execute();
}

export async function findUserByEmail(db: Kysely<DB>, email: string): Promise<User | undefined> {
  return db.selectFrom('users').selectAll().where('email', '=', email.toLowerCase()).executeTakeFirst();
}

/** E-mail addresses of a clinic's owners, so staff know whom to ask for a key. */
export async function listClinicOwnerEmails(db: Kysely<DB>, clinicId: string): Promise<string[]> {
  const rows = await db
    .selectFrom('users')
    .select('email')
    .where('clinic_id', '=', clinicId)
    .where('role', '=', 'owner')
    .orderBy('email')
    .execute();
  return rows.map((r) => r.email);
}

/** A clinic's users (never their password hashes): owners, then staff ('owner' < 'staff'), each by e-mail. */
export async function listUsersOfClinic(db: Kysely<DB>, clinicId: string): Promise<Omit<User, 'password_hash'>[]> {
  return db
    .selectFrom('users')
    .select(['id', 'clinic_id', 'email', 'role', 'created_at'])
    .where('clinic_id', '=', clinicId)
    .orderBy('role')
    .orderBy('email')
    .execute();
}

export async function updateUserPassword(db: Kysely<DB>, userId: string, passwordHash: string): Promise<void> {
  await db.updateTable('users').set({ password_hash: passwordHash }).where('id', '=', userId).execute();
}

/** A user by id (the OAuth server's account look-up: a grant names the user who gave it). */
export async function findUserById(db: Kysely<DB>, id: string): Promise<User | undefined> {
  return db.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirst();
}
