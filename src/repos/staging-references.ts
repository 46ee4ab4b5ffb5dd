// References of staged records to the records they refer to (a clienta: staging.ts), resolved in
// SQL once the whole file is staged. A reference on line L exists at L when its clienta is stored and not
// deleted by the file before L, or listed on a line before L after her last deletion. One that
// does not is `later` (her line comes further down: the line's event waits for the end of the
// import, when she is there) or dangling (no line of hers follows: a problem of line L).
import { sql, type Kysely, type RawBuilder } from 'kysely';
import { dialectOf } from '../db/dialect.js';
import type { DB } from '../db/schema.js';
import { REFERRING, type ReferringName } from '../collections/index.js';
import { lastLines, STAGED } from './staging.js';

const ALIAS = 'r';

/**
 * The clienta of `r` (line, clienta_id) does not exist at r.line. Written as NOT EXISTS joined by
 * AND, which PostgreSQL plans as anti-joins (an OR of EXISTS is a probe per row).
 */
function missingAtLine(clinicId: string, clientaDeletions: boolean): RawBuilder<unknown> {
  const id = sql.ref(`${ALIAS}.clienta_id`);
  const line = sql.ref(`${ALIAS}.line`);
  const notStored = sql`not exists (select 1 from clientas s where s.clinic_id = ${clinicId} and s.id = ${id})`;
  if (!clientaDeletions)
    return sql`(not exists (select 1 from import_clientas c where c.id = ${id} and c.line < ${line}) and ${notStored})`;
  const lastDeletion = sql`(select max(d.line) from import_deletions d where d.type = 'clienta' and d.id = ${id} and d.line < ${line})`;
  return sql`(not exists (select 1 from import_clientas c where c.id = ${id} and c.line < ${line} and c.line > coalesce(${lastDeletion}, 0))
    and (${lastDeletion} is not null or ${notStored}))`;
}

/** No line of the clienta of `r` follows r.line. */
const notListedAfter = sql`not exists (select 1 from import_clientas c
  where c.id = ${sql.ref(`${ALIAS}.clienta_id`)} and c.line > ${sql.ref(`${ALIAS}.line`)})`;

/** Whether the file deletes any clienta (references must then be resolved in file order). */
export async function deletesClientas(db: Kysely<DB>): Promise<boolean> {
  const r = await sql<{ n: number | string }>`select count(*) as n from import_deletions where type = 'clienta'`.execute(db);
  return Number(r.rows[0]?.n ?? 0) > 0;
}

/** Marks the staged records whose clienta does not exist at their line; returns how many. */
export async function markLaterReferences(db: Kysely<DB>, clinicId: string, clientaDeletions: boolean): Promise<number> {
  let n = 0;
  for (const table of REFERRING.map((n) => STAGED[n])) {
    const r = await sql`update ${sql.table(table)} as r set later = 1
      where r.clienta_id is not null and ${missingAtLine(clinicId, clientaDeletions)}`.execute(db);
    n += Number(r.numAffectedRows ?? 0);
  }
  return n;
}

/** The marked lines of every staged collection that refers. */
const REFS = sql.raw(
  REFERRING.map((n, i) => `select line, clienta_id, 0${i === 0 ? ' as bad' : ''} from ${STAGED[n]} where later = 1`).join(
    '\n    union all ',
  ),
);

/**
 * The references that resolve to no clienta (after markLaterReferences): one anti-join of the
 * marked lines, and of the references of lines with other problems, against the staged
 * clientas. How many, how many of them are on lines with no other problem, the first `max` by line.
 */
export async function danglingReferences(db: Kysely<DB>, clinicId: string, max: number, clientaDeletions: boolean) {
  const refs = sql`with refs as (${REFS}
    union all select b.line, b.clienta_id, 1 from import_bad_refs b)`;
  const dangling = sql`${notListedAfter} and (r.bad = 0 or ${missingAtLine(clinicId, clientaDeletions)})`;
  const count = await sql<{
    n: number | string;
    good: number | string | null;
  }>`${refs} select count(*) as n, sum(1 - r.bad) as good from refs r where ${dangling}`.execute(db);
  const n = Number(count.rows[0]?.n ?? 0);
  if (n === 0) return { count: 0, onGoodLines: 0, first: [] };
  const first = await sql<{
    line: number | string;
    clienta_id: string;
  }>`${refs} select r.line, r.clienta_id from refs r where ${dangling} order by r.line limit ${max}`.execute(db);
  return {
    count: n,
    onGoodLines: Number(count.rows[0]?.good ?? 0),
    first: first.rows.map((r) => ({ line: Number(r.line), clientaId: r.clienta_id })),
  };
}

/** The ids of the staged lines (after, through] of `table` marked later, among those a chunk's write took its rows from. */
export async function laterIds(db: Kysely<DB>, table: ReferringName, after: number, through: number): Promise<Set<string>> {
  const last = lastLines(dialectOf(db), STAGED[table], `line > ${Number(after)} and line <= ${Number(through)}`);
  const r = await sql<{ id: string }>`select id from ${sql.table(STAGED[table])} where later = 1 and line ${sql.raw(last)}`.execute(db);
  return new Set(r.rows.map((x) => x.id));
}
