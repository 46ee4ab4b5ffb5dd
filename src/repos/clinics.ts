import type { Kysely, Selectable } from 'kysely';
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
