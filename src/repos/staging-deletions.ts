// Deletions of what does not exist, found while resolving (staging.ts's tables, one query per
// collection): a deletion line finds its record when, applied in file order, the record would be
// there. That is, its latest line before the deletion (a record line, or a deletion of it) is a
// record line; or it has none and the record is stored. A record deleted with the one it refers to
// (`deletedWithReferred`: a cita with its clienta) is gone too when that one's deletion, which
// found her, comes after its latest record line. A deletion of what an earlier deletion line of the
// same run took is reported as such (`again`).
import { sql, type Kysely, type RawBuilder } from 'kysely';
import { COLLECTIONS, COLLECTION_NAMES, REFERRED, type CollectionName, type RecordType } from '../collections/index.js';
import type { DB } from '../db/schema.js';
import { STAGED } from './staging.js';

export interface MissingDeletion {
  line: number;
  type: RecordType;
  id: string;
  again: boolean;
}

/** Indexes the look-ups below need on the staged record lines (made only for a file that deletes). */
export async function indexForDeletions(db: Kysely<DB>): Promise<void> {
  for (const n of COLLECTION_NAMES) {
    if (n === REFERRED) continue; // staging.ts made its own
    await sql.raw(`create index ${STAGED[n]}_by_id on ${STAGED[n]} (id, line)`).execute(db);
  }
}

/** Whether record `id` (an SQL expression) of collection `n` exists just before line `at`, its own lines and deletions only. */
function existsAt(n: CollectionName, clinicId: string, id: RawBuilder<unknown>, at: RawBuilder<unknown>) {
  const type = COLLECTIONS[n].singular;
  const lastLine = sql`(select max(r.line) from ${sql.table(STAGED[n])} r where r.id = ${id} and r.line < ${at})`;
  const lastDeletion = sql`(select max(e.line) from import_deletions e where e.type = ${type} and e.id = ${id} and e.line < ${at})`;
  const stored = sql`exists (select 1 from ${sql.table(n)} s where s.clinic_id = ${clinicId} and s.id = ${id})`;
  return sql`(coalesce(${lastLine}, 0) > coalesce(${lastDeletion}, 0) or (${lastLine} is null and ${lastDeletion} is null and ${stored}))`;
}

/** The deletion lines of collection `n` that find nothing, in line order, at most `max`, and how many. */
async function missingOf(db: Kysely<DB>, n: CollectionName, clinicId: string, max: number) {
  const c = COLLECTIONS[n];
  const id = sql.ref('d.id');
  const at = sql.ref('d.line');
  let found = existsAt(n, clinicId, id, at);
  if (c.deletedWithReferred && c.refersTo !== null) {
    // Gone with the one it referred to (as of its latest line, or as stored) if that one's
    // deletion came after it and found her.
    const referred = c.refersTo as CollectionName;
    const lastLine = sql`(select max(r.line) from ${sql.table(STAGED[n])} r where r.id = ${id} and r.line < ${at})`;
    const refOf = sql`coalesce((select r.clienta_id from ${sql.table(STAGED[n])} r where r.line = ${lastLine}),
      (select s.clienta_id from ${sql.table(n)} s where s.clinic_id = ${clinicId} and s.id = ${id}))`;
    const cascaded = sql`exists (select 1 from import_deletions y where y.type = ${COLLECTIONS[referred].singular}
      and y.id = ${refOf} and y.line > coalesce(${lastLine}, 0) and y.line < ${at}
      and ${existsAt(referred, clinicId, sql.ref('y.id'), sql.ref('y.line'))})`;
    found = sql`(${found} and not ${cascaded})`;
  }
  const previous = sql`(select max(e.line) from import_deletions e where e.type = ${c.singular} and e.id = ${id} and e.line < ${at})`;
  const again = sql`exists (select 1 from import_deletions p where p.line = ${previous} and p.run = d.run)`;
  const missing = sql`d.type = ${c.singular} and not ${found}`;
  const count = await sql<{ n: number | string }>`select count(*) as n from import_deletions d where ${missing}`.execute(db);
  const total = Number(count.rows[0]?.n ?? 0);
  if (total === 0) return { count: 0, first: [] as MissingDeletion[] };
  const rows = await sql<{ line: number | string; id: string; again: number | boolean }>`select d.line, d.id,
    case when ${again} then 1 else 0 end as again from import_deletions d where ${missing} order by d.line limit ${max}`.execute(db);
  return {
    count: total,
    first: rows.rows.map((r) => ({ line: Number(r.line), type: c.singular as RecordType, id: r.id, again: Number(r.again) === 1 })),
  };
}

/** Every deletion line that finds nothing: how many, and the first `max` by line. */
export async function missingDeletions(
  db: Kysely<DB>,
  clinicId: string,
  max: number,
): Promise<{ count: number; first: MissingDeletion[] }> {
  let count = 0;
  let first: MissingDeletion[] = [];
  for (const n of COLLECTION_NAMES) {
    const m = await missingOf(db, n, clinicId, max);
    count += m.count;
    first = [...first, ...m.first];
  }
  first.sort((a, b) => a.line - b.line);
  return { count, first: first.slice(0, max) };
}
