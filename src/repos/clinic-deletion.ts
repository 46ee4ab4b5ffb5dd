// Every row of one clinic, table by table (`clinic-api clinics delete`), in an order the foreign
// keys allow: what refers to a row goes before it. CLINIC_TABLES is the list a test compares with
// the schema (every table with a clinic_id column must be in it: test/db/clinic-deletion.test.ts).
// The caller runs deleteClinicRows inside one writing transaction.
import type { Kysely } from 'kysely';
import { COLLECTIONS, REFERRED, REFERRING } from '../collections/index.js';
import { dialectOf } from '../db/dialect.js';
import type { DB } from '../db/schema.js';
import { countClinicRows } from './clinic-rows.js';
import { deleteUnnamedSets } from './request-log.js';

/**
 * Tables with a clinic_id column, in deletion order (webhook_deliveries before their endpoints,
 * the collections that refer before the one they refer to ...).
 */
export const CLINIC_TABLES = [
  'webhook_replays',
  'webhook_alert_mails',
  'webhook_idempotency',
  'clinic_export_parts',
  'clinic_exports',
  'webhook_deliveries',
  'webhook_endpoints',
  'events',
  'api_key_usage',
  'api_key_errors',
  // request_access_sets rows (no clinic_id: the log rows naming them give the tenancy) go just after these.
  'request_log',
  // oauth_artifacts rows (tokens and codes, no clinic_id: their grant gives the tenancy) go just before these.
  'oauth_grants',
  ...REFERRING,
  ...[...REFERRING, REFERRED].map((n) => COLLECTIONS[n].counts.table),
  // clientas_search (SQLite's search index) rows go with the rows they index (a trigger); counted here after.
  REFERRED,
  'clientas_search',
  'clinic_data_versions',
  'api_keys',
  'users',
] as const satisfies readonly (keyof DB)[];

export type ClinicTable = (typeof CLINIC_TABLES)[number] | 'dashboard_sessions' | 'clinics' | 'request_access_sets' | 'oauth_artifacts';

/** The clinic's API key ids (to evict and announce once they are gone). */
export async function clinicKeyIds(db: Kysely<DB>, clinicId: string): Promise<string[]> {
  const rows = await db.selectFrom('api_keys').select('id').where('clinic_id', '=', clinicId).execute();
  return rows.map((r) => r.id);
}

/** Deletes every row of the clinic, the clinic last; rows deleted per table. */
export async function deleteClinicRows(db: Kysely<DB>, clinicId: string, hasSearchTable: boolean): Promise<Record<ClinicTable, number>> {
  const counts = {} as Record<ClinicTable, number>;
  // PostgreSQL: the clinic's row locked first, so a request-log write that found the clinic alive
  // (liveClinics, repos/request-log.ts) commits before its rows are deleted below, and one that
  // starts now waits and finds it gone. SQLite's single writer already orders them.
  if (dialectOf(db) === 'postgres') await db.selectFrom('clinics').select('id').where('id', '=', clinicId).forUpdate().execute();
  // Sessions of the clinic's own users (a superadmin's have no clinic and stay).
  const sessions = await db
    .deleteFrom('dashboard_sessions')
    .where('user_id', 'in', db.selectFrom('users').select('id').where('clinic_id', '=', clinicId))
    .executeTakeFirst();
  counts.dashboard_sessions = Number(sessions.numDeletedRows);
  // SQLite only: the clientas' delete trigger empties it (and the text index) as they go.
  const searchRows = hasSearchTable ? await countClinicRows(db, 'clientas_search', clinicId) : 0;
  for (const table of CLINIC_TABLES) {
    if (table === 'clientas_search') {
      if (hasSearchTable) await db.deleteFrom('clientas_search').where('clinic_id', '=', clinicId).execute();
      counts.clientas_search = searchRows;
      continue;
    }
    if (table === 'request_log') {
      // The clinic's sets (a set is one clinic's: its id digests the clinic) go once no log row names them.
      const sets = await db
        .selectFrom('request_log')
        .select('access_set')
        .distinct()
        .where('clinic_id', '=', clinicId)
        .where('access_set', 'is not', null)
        .execute();
      const res = await db.deleteFrom(table).where('clinic_id', '=', clinicId).executeTakeFirst();
      counts.request_log = Number(res.numDeletedRows);
      counts.request_access_sets = await deleteUnnamedSets(
        db,
        sets.map((s) => s.access_set!),
      );
      continue;
    }
    if (table === 'oauth_grants') {
      const artifacts = await db
        .deleteFrom('oauth_artifacts')
        .where('grant_id', 'in', db.selectFrom('oauth_grants').select('id').where('clinic_id', '=', clinicId))
        .executeTakeFirst();
      counts.oauth_artifacts = Number(artifacts.numDeletedRows);
    }
    const res = await db.deleteFrom(table).where('clinic_id', '=', clinicId).executeTakeFirst();
    counts[table] = Number(res.numDeletedRows);
  }
  const res = await db.deleteFrom('clinics').where('id', '=', clinicId).executeTakeFirst();
  counts.clinics = Number(res.numDeletedRows);
  return counts;
}
