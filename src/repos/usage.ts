// API usage per key: batched upserts from UsageCounter.flush() and the dashboard's reads.
// ON CONFLICT ... DO UPDATE is the same statement on SQLite (>= 3.24) and PostgreSQL.
import type { Kysely, Selectable } from 'kysely';
import type { ApiKeyErrorsTable, ApiKeyUsageTable, DB } from '../db/schema.js';

export type UsageRow = Selectable<ApiKeyUsageTable>;
export type KeyErrorRow = Selectable<ApiKeyErrorsTable>;

// 6 or 7 bound values a row: far below SQLite's 32766-variable limit per statement.
const CHUNK = 500;

function chunks<T>(rows: T[]): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < rows.length; i += CHUNK) out.push(rows.slice(i, i + CHUNK));
  return out;
}

/**
 * Of these rows, those whose key still exists in its clinic: a clinic deleted (`clinics delete`)
 * since its requests were counted takes its keys with it, and its counts are dropped rather than
 * failing the whole batch on the foreign key. Keyed by (clinic, key) pairs the rows carry: the
 * batch spans clinics, as the flush does.
 */
export async function rowsOfExistingKeys<T extends { clinic_id: string; key_id: string }>(db: Kysely<DB>, rows: T[]): Promise<T[]> {
  const ids = [...new Set(rows.map((r) => r.key_id))];
  const existing = new Set<string>();
  for (const part of chunks(ids)) {
    for (const k of await db.selectFrom('api_keys').select(['id', 'clinic_id']).where('id', 'in', part).execute())
      existing.add(`${k.clinic_id} ${k.id}`);
  }
  return rows.filter((r) => existing.has(`${r.clinic_id} ${r.key_id}`));
}

/** Adds each row's n to the stored count (inserting the row when new). */
export async function addUsage(db: Kysely<DB>, rows: UsageRow[]): Promise<void> {
  for (const part of chunks(rows)) {
    await db
      .insertInto('api_key_usage')
      .values(part)
      .onConflict((oc) =>
        oc.columns(['key_id', 'day', 'status_class', 'error_code']).doUpdateSet((eb) => ({
          n: eb('api_key_usage.n', '+', eb.ref('excluded.n')),
        })),
      )
      .execute();
  }
}

/** Adds to each (key, error code)'s count and keeps the latest time it was seen. */
export async function addKeyErrors(db: Kysely<DB>, rows: KeyErrorRow[]): Promise<void> {
  for (const part of chunks(rows)) {
    await db
      .insertInto('api_key_errors')
      .values(part)
      .onConflict((oc) =>
        oc.columns(['key_id', 'error_code']).doUpdateSet((eb) => ({
          n: eb('api_key_errors.n', '+', eb.ref('excluded.n')),
          status: eb.ref('excluded.status'),
          last_at: eb
            .case()
            .when('excluded.last_at', '>', eb.ref('api_key_errors.last_at'))
            .then(eb.ref('excluded.last_at'))
            .else(eb.ref('api_key_errors.last_at'))
            .end(),
        })),
      )
      .execute();
  }
}

/** The clinic's usage rows for local days `fromDay`..`toDay` inclusive. */
export async function usageForDays(db: Kysely<DB>, clinicId: string, fromDay: string, toDay: string): Promise<UsageRow[]> {
  return db
    .selectFrom('api_key_usage')
    .selectAll()
    .where('clinic_id', '=', clinicId)
    .where('day', '>=', fromDay)
    .where('day', '<=', toDay)
    .execute();
}

/** The clinic's most recent error codes, newest first (a few per key is all the page shows). */
export async function recentKeyErrors(db: Kysely<DB>, clinicId: string, limit = 500): Promise<KeyErrorRow[]> {
  return db
    .selectFrom('api_key_errors')
    .selectAll()
    .where('clinic_id', '=', clinicId)
    .orderBy('last_at', 'desc')
    .orderBy('error_code')
    .limit(limit)
    .execute();
}
