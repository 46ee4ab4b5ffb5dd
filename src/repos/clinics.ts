import { type Kysely, type Selectable } from 'kysely';
import { compiledOnce } from '../db/compiled-once.js';
import type { ClinicsTable, DB } from '../db/schema.js';

export type Clinic = Selectable<ClinicsTable>;

export async function insertClinic(db: Kysely<DB>, clinic: Clinic): Promise<void> {
  await db.insertInto('clinics').values(clinic).execute();
}

export async function getClinic(db: Kysely<DB>, id: string): Promise<Clinic | undefined> {
  return db.selectFrom('clinics').selectAll().where('id', '=', id).executeTakeFirst();
}

/** The live clinics by name (a sandbox is listed with its clinic, never as one: sandboxOf). */
export async function listClinics(db: Kysely<DB>): Promise<Clinic[]> {
  return db.selectFrom('clinics').selectAll().where('sandbox_of', 'is', null).orderBy('name').orderBy('id').execute();
}

/** The id of the clinic's sandbox (test mode: services/sandbox.ts), or null when it has none yet. */
export async function sandboxOf(db: Kysely<DB>, clinicId: string): Promise<string | null> {
  const row = await db.selectFrom('clinics').select('id').where('sandbox_of', '=', clinicId).executeTakeFirst();
  return row?.id ?? null;
}

/** Across clinics (background work): every sandbox that exists, each naming its live clinic (the sandboxes' periodic moves). */
export async function listSandboxes(db: Kysely<DB>): Promise<Clinic[]> {
  return db.selectFrom('clinics').selectAll().where('sandbox_of', 'is not', null).orderBy('id').execute();
}

/** Inserts a sandbox row unless the clinic has one already; whether it was inserted. */
export async function insertSandboxClinic(db: Kysely<DB>, sandbox: Clinic): Promise<boolean> {
  const res = await db
    .insertInto('clinics')
    .values(sandbox)
    .onConflict((oc) => oc.column('sandbox_of').where('sandbox_of', 'is not', null).doNothing())
    .executeTakeFirst();
  return Number(res.numInsertedOrUpdatedRows ?? 0) > 0;
}

/** The clinic's plan changed (its sandbox's too: what may be made in it follows the clinic); false when there is no such clinic. */
export async function updateClinicPlan(db: Kysely<DB>, id: string, plan: string): Promise<boolean> {
  const res = await db.updateTable('clinics').set({ plan }).where('id', '=', id).executeTakeFirst();
  await db.updateTable('clinics').set({ plan }).where('sandbox_of', '=', id).execute();
  return Number(res.numUpdatedRows) > 0;
}

export interface ClinicWithKeyCounts extends Clinic {
  /** Keys neither revoked nor expired at `nowS`. */
  active_keys: number;
  /** Every key ever issued, revoked and expired ones included. */
  all_keys: number;
}

/** Every clinic by name, with its key counts (the operator's `clinics list`; one grouped count, no per-clinic query). */
export async function listClinicsWithKeyCounts(db: Kysely<DB>, nowS: number): Promise<ClinicWithKeyCounts[]> {
  const counts = db
    .selectFrom('api_keys')
    .select((eb) => [
      'clinic_id',
      eb.fn.countAll<number>().as('all_keys'),
      eb.fn
        .sum<number>(
          eb
            .case()
            .when(eb.and([eb('revoked_at', 'is', null), eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', nowS)])]))
            .then(1)
            .else(0)
            .end(),
        )
        .as('active_keys'),
    ])
    .groupBy('clinic_id')
    .as('k');
  const rows = await db
    .selectFrom('clinics as c')
    .leftJoin(counts, 'k.clinic_id', 'c.id')
    .selectAll('c')
    .select(['k.all_keys', 'k.active_keys'])
    .where('c.sandbox_of', 'is', null)
    .orderBy('c.name')
    .orderBy('c.id')
    .execute();
  return rows.map((r) => ({ ...r, all_keys: Number(r.all_keys ?? 0), active_keys: Number(r.active_keys ?? 0) }));
}

export async function countClinics(db: Kysely<DB>): Promise<number> {
  const row = await db
    .selectFrom('clinics')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('sandbox_of', 'is', null)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

export interface DataVersions {
  clientas: number;
  data: number;
  eventsSeq: number;
  eventsExpired: number;
}

const versionsQuery = compiledOnce(['clinicId'] as const, (db, p: { clinicId: string }) =>
  db.selectFrom('clinic_data_versions').select(['clientas', 'data', 'events_seq', 'events_expired']).where('clinic_id', '=', p.clinicId),
);

/**
 * The clinic's data versions and event-log bounds (all 0 until its first write): one primary-key
 * read, which is all a conditional request costs when nothing changed.
 */
export async function dataVersions(db: Kysely<DB>, clinicId: string): Promise<DataVersions> {
  const [row] = await versionsQuery(db, { clinicId });
  return row === undefined
    ? { clientas: 0, data: 0, eventsSeq: 0, eventsExpired: 0 }
    : {
        clientas: Number(row.clientas),
        data: Number(row.data),
        eventsSeq: Number(row.events_seq),
        eventsExpired: Number(row.events_expired),
      };
}

/** The version of the clinic's clientas (0 until the first write): see migration 004. */
export async function clientasVersion(db: Kysely<DB>, clinicId: string): Promise<number> {
  return (await dataVersions(db, clinicId)).clientas;
}

/** Makes sure the clinic has its row of versions, so that writers can update it. */
export async function ensureDataVersions(db: Kysely<DB>, clinicId: string): Promise<void> {
  await db
    .insertInto('clinic_data_versions')
    .values({ clinic_id: clinicId, clientas: 0, data: 0, events_seq: 0, events_expired: 0 })
    .onConflict((oc) => oc.column('clinic_id').doNothing())
    .execute();
}

/**
 * Marks the clinic's data as changed (the lists' ETags), and its clientas too when they changed
 * (the kept search totals); call inside the writing transaction, after ensureDataVersions.
 */
export async function bumpDataVersions(db: Kysely<DB>, clinicId: string, clientasChanged: boolean): Promise<void> {
  await db
    .updateTable('clinic_data_versions')
    .set((eb) => ({ data: eb('data', '+', 1), ...(clientasChanged ? { clientas: eb('clientas', '+', 1) } : {}) }))
    .where('clinic_id', '=', clinicId)
    .execute();
}
