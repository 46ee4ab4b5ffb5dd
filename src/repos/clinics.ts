import { sql, type Kysely, type Selectable } from 'kysely';
import type { ClinicsTable, DB } from '../db/schema.js';

export type Clinic = Selectable<ClinicsTable>;

export async function insertClinic(db: Kysely<DB>, clinic: Clinic): Promise<void> {
  await db.insertInto('clinics').values(clinic).execute();
}

export async function getClinic(db: Kysely<DB>, id: string): Promise<Clinic | undefined> {
  return db.selectFrom('clinics').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function listClinics(db: Kysely<DB>): Promise<Clinic[]> {
  return db.selectFrom('clinics').selectAll().orderBy('name').orderBy('id').execute();
}

export async function countClinics(db: Kysely<DB>): Promise<number> {
  const row = await db.selectFrom('clinics').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
  return Number(row.n);
}

/** The version of the clinic's clientas (0 until the first write): see migration 004. */
export async function clientasVersion(db: Kysely<DB>, clinicId: string): Promise<number> {
  const row = await db.selectFrom('clinic_data_versions').select('clientas').where('clinic_id', '=', clinicId).executeTakeFirst();
  return Number(row?.clientas ?? 0);
}

/** Marks the clinic's clientas as changed; call inside the writing transaction. */
export async function bumpClientasVersion(db: Kysely<DB>, clinicId: string): Promise<void> {
  await db.insertInto('clinic_data_versions').values({ clinic_id: clinicId, clientas: 1 })
    .onConflict((oc) => oc.column('clinic_id').doUpdateSet({ clientas: sql`clinic_data_versions.clientas + 1` }))
    .execute();
}
