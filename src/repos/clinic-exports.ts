// The rows of the clinic exports made in the background (migration 016; services/exports/jobs.ts).
// Every read for a clinic names it; the worker's reads across clinics (the next export to make,
// the expired ones) carry each row's own clinic.
import type { Kysely } from 'kysely';
import type { ClinicExportsTable, DB } from '../db/schema.js';

export type ClinicExportRow = ClinicExportsTable;

const num = (r: ClinicExportRow): ClinicExportRow => ({
  ...r,
  done: Number(r.done),
  total: Number(r.total),
  bytes: r.bytes === null ? null : Number(r.bytes),
  parts: Number(r.parts),
  requested_at: Number(r.requested_at),
  finished_at: r.finished_at === null ? null : Number(r.finished_at),
  expires_at: r.expires_at === null ? null : Number(r.expires_at),
  lease_until: r.lease_until === null ? null : Number(r.lease_until),
});

export async function insertExport(db: Kysely<DB>, row: ClinicExportRow): Promise<void> {
  await db.insertInto('clinic_exports').values(row).execute();
}

/** The clinic's exports not expired yet, newest first. */
export async function exportsOf(db: Kysely<DB>, clinicId: string, nowMs: number, limit: number): Promise<ClinicExportRow[]> {
  const rows = await db
    .selectFrom('clinic_exports')
    .selectAll()
    .where('clinic_id', '=', clinicId)
    .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', nowMs)]))
    .orderBy('requested_at', 'desc')
    .limit(limit)
    .execute();
  return rows.map(num);
}

export async function exportOf(db: Kysely<DB>, clinicId: string, id: string): Promise<ClinicExportRow | undefined> {
  const row = await db.selectFrom('clinic_exports').selectAll().where('clinic_id', '=', clinicId).where('id', '=', id).executeTakeFirst();
  return row && num(row);
}

/** The oldest export waiting, or running under a lease that ran out (its instance stopped). */
export async function nextToMake(db: Kysely<DB>, nowMs: number): Promise<ClinicExportRow | undefined> {
  const row = await db
    .selectFrom('clinic_exports')
    .selectAll()
    .where((eb) => eb.or([eb('state', '=', 'queued'), eb.and([eb('state', '=', 'running'), eb('lease_until', '<', nowMs)])]))
    .orderBy('requested_at')
    .limit(1)
    .executeTakeFirst();
  return row && num(row);
}

/**
 * Takes `row` for this instance until `leaseUntil`, if nobody took it since it was read (its
 * state and lease unchanged): false when another instance was first.
 */
export async function takeExport(db: Kysely<DB>, row: ClinicExportRow, leaseUntil: number): Promise<boolean> {
  const r = await db
    .updateTable('clinic_exports')
    .set({ state: 'running', lease_until: leaseUntil, done: 0, parts: 0 })
    .where('id', '=', row.id)
    .where('state', '=', row.state)
    .where((eb) => (row.lease_until === null ? eb('lease_until', 'is', null) : eb('lease_until', '=', row.lease_until)))
    .executeTakeFirst();
  return Number(r.numUpdatedRows) === 1;
}

export async function setExport(db: Kysely<DB>, id: string, values: Partial<Omit<ClinicExportRow, 'id' | 'clinic_id'>>): Promise<void> {
  await db.updateTable('clinic_exports').set(values).where('id', '=', id).execute();
}

export async function insertPart(db: Kysely<DB>, clinicId: string, exportId: string, seq: number, data: Uint8Array): Promise<void> {
  await db.insertInto('clinic_export_parts').values({ clinic_id: clinicId, export_id: exportId, seq, data }).execute();
}

/** Part `seq` of the export's ZIP (the caller has checked the export is the clinic's). */
export async function partOf(db: Kysely<DB>, clinicId: string, exportId: string, seq: number): Promise<Uint8Array | undefined> {
  const row = await db
    .selectFrom('clinic_export_parts')
    .select('data')
    .where('export_id', '=', exportId)
    .where('seq', '=', seq)
    .where('clinic_id', '=', clinicId)
    .executeTakeFirst();
  return row?.data;
}

export async function deleteParts(db: Kysely<DB>, exportId: string): Promise<void> {
  await db.deleteFrom('clinic_export_parts').where('export_id', '=', exportId).execute();
}

/** Exports past their expiry (every clinic's), oldest first. */
export async function expiredExports(db: Kysely<DB>, nowMs: number, limit: number): Promise<string[]> {
  const rows = await db
    .selectFrom('clinic_exports')
    .select('id')
    .where('expires_at', '<=', nowMs)
    .orderBy('expires_at')
    .limit(limit)
    .execute();
  return rows.map((r) => r.id);
}

export async function deleteExport(db: Kysely<DB>, id: string): Promise<void> {
  await db.deleteFrom('clinic_export_parts').where('export_id', '=', id).execute();
  await db.deleteFrom('clinic_exports').where('id', '=', id).execute();
}

/** Whether the clinic has an export waiting or being made. */
export async function activeExportOf(db: Kysely<DB>, clinicId: string): Promise<ClinicExportRow | undefined> {
  const row = await db
    .selectFrom('clinic_exports')
    .selectAll()
    .where('clinic_id', '=', clinicId)
    .where('state', 'in', ['queued', 'running'])
    .orderBy('requested_at', 'desc')
    .limit(1)
    .executeTakeFirst();
  return row && num(row);
}
