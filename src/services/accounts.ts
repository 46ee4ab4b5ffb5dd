// Clinics and people: creation with validation, and the look-ups the dashboard and the CLI make
// (they reach data through services only). Used by the CLI, first run and the dashboard.
import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import { whenWritable } from '../db/connect.js';
import type { DB } from '../db/schema.js';
import { PLANS, ROLES, type Plan, type Role } from '../domain/records.js';
import { DomainError } from '../errors.js';
import {
  getClinic,
  insertClinic,
  listClinics,
  listClinicsWithKeyCounts,
  updateClinicPlan,
  type Clinic,
  type ClinicWithKeyCounts,
} from '../repos/clinics.js';
import { deleteUserSessions } from '../repos/sessions.js';
import { findUserByEmail, insertUser, listClinicOwnerEmails, listUsersOfClinic, updateUserPassword, type User } from '../repos/users.js';
import { isValidTimeZone } from '../time.js';
import { hashPassword, MIN_PASSWORD_LENGTH } from './passwords.js';
import { INTERACTIVE_WRITE_WAIT_MS } from './write-lock.js';

const invalid = (field: string, message: string) => new DomainError('invalid_input', message, { field });

export type { Clinic, ClinicWithKeyCounts, User };
/**
 * The look-ups the dashboard and the CLI make, which are plain queries: getClinic (a signed-in
 * user's own clinic, or one an operator or superadmin names), listClinics (by name),
 * findUserByEmail (any case) and listClinicOwnerEmails (whom staff ask for a key).
 */
export { getClinic, listClinics, findUserByEmail, listClinicOwnerEmails };

const CURRENCIES = new Set(Intl.supportedValuesOf('currency'));
export const LANGUAGES = ['es', 'en'] as const;

export interface NewClinic {
  name: string;
  timezone?: string;
  currency?: string;
  plan?: string;
  language?: string;
}

/** The clinic `id`, or not_found naming it (an operator or a form named a clinic that does not exist). */
export async function requireClinic(db: Kysely<DB>, id: string): Promise<Clinic> {
  const clinic = await getClinic(db, id);
  if (!clinic) throw new DomainError('not_found', `no clinic with id ${id} (clinic-api clinics list shows the ids)`, { field: 'clinic' });
  return clinic;
}

function validPlan(plan: string): Plan {
  if (!(PLANS as readonly string[]).includes(plan)) throw invalid('plan', `plan must be one of ${PLANS.join(', ')}, got "${plan}"`);
  return plan as Plan;
}

export async function createClinic(db: Kysely<DB>, input: NewClinic, nowMs = Date.now()): Promise<Clinic> {
  const name = input.name.trim();
  if (name.length < 1 || name.length > 200) throw invalid('name', 'name must be 1 to 200 characters');
  const timezone = input.timezone ?? 'Europe/Madrid';
  if (!isValidTimeZone(timezone))
    throw invalid('timezone', `"${timezone}" is not an IANA time zone (e.g. Europe/Madrid, America/Mexico_City)`);
  const currency = (input.currency ?? 'EUR').toUpperCase();
  if (!CURRENCIES.has(currency)) throw invalid('currency', `"${input.currency}" is not an ISO 4217 currency code (e.g. EUR, MXN, USD)`);
  const plan = validPlan(input.plan ?? 'pro_total');
  const language = input.language ?? 'es';
  if (!(LANGUAGES as readonly string[]).includes(language)) throw invalid('language', `language must be one of ${LANGUAGES.join(', ')}`);
  const clinic: Clinic = {
    id: randomUUID(),
    name,
    timezone,
    currency,
    plan,
    language,
    created_at: Math.floor(nowMs / 1000),
    sandbox_of: null,
  };
  await whenWritable(() => insertClinic(db, clinic), INTERACTIVE_WRITE_WAIT_MS);
  return clinic;
}

export interface NewUser {
  clinicId: string | null;
  email: string;
  role: string;
  password: string;
}

const EMAIL_RE = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

export async function createUser(db: Kysely<DB>, input: NewUser, nowMs = Date.now()): Promise<User> {
  const email = input.email.trim().toLowerCase();
  if (!EMAIL_RE.test(email) || email.length > 254) throw invalid('email', `"${input.email}" is not an e-mail address`);
  if (!(ROLES as readonly string[]).includes(input.role)) throw invalid('role', `role must be one of ${ROLES.join(', ')}`);
  const role = input.role as Role;
  if (role === 'superadmin' && input.clinicId) throw invalid('clinic', 'a superadmin belongs to no clinic: leave out --clinic');
  if (role !== 'superadmin' && !input.clinicId)
    throw invalid('clinic', `${role === 'owner' ? 'an owner' : 'a staff member'} belongs to a clinic: give --clinic ID`);
  if (input.clinicId) await requireClinic(db, input.clinicId);
  if (input.password.length < MIN_PASSWORD_LENGTH)
    throw invalid('password', `the password must be at least ${MIN_PASSWORD_LENGTH} characters`);
  if (await findUserByEmail(db, email)) throw new DomainError('conflict', `a user with e-mail ${email} already exists`, { field: 'email' });
  const user: User = {
    id: randomUUID(),
    clinic_id: role === 'superadmin' ? null : input.clinicId,
    email,
    role,
    password_hash: await hashPassword(input.password),
    created_at: Math.floor(nowMs / 1000),
  };
  await whenWritable(() => insertUser(db, user), INTERACTIVE_WRITE_WAIT_MS);
  return user;
}

/**
 * Changes the clinic's plan; returns the clinic as it is now and the plan it had. Key creation
 * follows the new plan at once; keys that exist keep working (keys are not plan-checked per
 * request), so a downgrade that must cut access also needs `keys revoke`.
 */
export async function setClinicPlan(db: Kysely<DB>, clinicId: string, plan: string): Promise<{ clinic: Clinic; previous: Plan }> {
  const next = validPlan(plan);
  const before = await requireClinic(db, clinicId);
  if (before.plan !== next) await whenWritable(() => updateClinicPlan(db, clinicId, next), INTERACTIVE_WRITE_WAIT_MS);
  return { clinic: { ...before, plan: next }, previous: before.plan as Plan };
}

/** Every clinic, by name, with how many keys it has (the operator's view). */
export function listClinicsWithKeys(db: Kysely<DB>, nowMs: number): Promise<ClinicWithKeyCounts[]> {
  return listClinicsWithKeyCounts(db, Math.floor(nowMs / 1000));
}

/** The clinic's dashboard users, without password hashes; not_found for an unknown clinic. */
export async function listUsers(db: Kysely<DB>, clinicId: string): Promise<Omit<User, 'password_hash'>[]> {
  await requireClinic(db, clinicId);
  return listUsersOfClinic(db, clinicId);
}

/**
 * Sets a new password for the user with `email` and ends all of that user's dashboard sessions in
 * the same transaction (whoever knew the old password is signed out everywhere, at once: sessions
 * are looked up on every request). Returns the user and how many sessions ended.
 */
export async function resetPassword(db: Kysely<DB>, email: string, password: string): Promise<{ user: User; sessionsEnded: number }> {
  const user = await findUserByEmail(db, email.trim());
  if (!user)
    throw new DomainError('not_found', `no user with e-mail ${email.trim()} (clinic-api users list --clinic ID shows a clinic's users)`, {
      field: 'email',
    });
  if (password.length < MIN_PASSWORD_LENGTH) throw invalid('password', `the password must be at least ${MIN_PASSWORD_LENGTH} characters`);
  const hash = await hashPassword(password);
  const sessionsEnded = await whenWritable(
    () =>
      db.transaction().execute(async (trx) => {
        await updateUserPassword(trx, user.id, hash);
        return deleteUserSessions(trx, user.id);
      }),
    INTERACTIVE_WRITE_WAIT_MS,
  );
  return { user: { ...user, password_hash: hash }, sessionsEnded };
}
