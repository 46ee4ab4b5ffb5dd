// The SQL of each client-search path (services/clientas-search/plan.ts says which one runs).
// All of them read this clinic's clientas only; the FTS5 probe, which cannot, returns a count.
//  - walk: the name-ordered index, filtered on the index entries themselves, for at most a budget
//    of entries: (clinic_id, nombre_norm, id, +telefono_digits), or the vip one.
//  - candidates: every match of the substring index (pg_trgm GIN / SQLite FTS5 trigram), sorted.
//  - range: the names in [lo, hi) (those that start with the term): a seek of the name index.
// The counts: the total (LIKE filter, or FTS5 matches on SQLite), and the runs of the matches in
// name order (the prefix range, the matches before it).
import { sql, type Expression, type Kysely, type SqlBool } from 'kysely';
import { dialectOf } from '../db/dialect.js';
import type { DB } from '../db/schema.js';
import type { ClientasFilter } from './clientas.js';

export interface NameRange {
  lo: string;
  hi: string;
}

function escapeLike(s: string): string {
  return s.replace(/[\\%_]/g, (ch) => `\\${ch}`);
}

function likeContains(column: string, needle: string): Expression<SqlBool> {
  return sql<SqlBool>`${sql.ref(column)} like ${`%${escapeLike(needle)}%`} escape '\\'`;
}

export function searchCondition(f: ClientasFilter, alias: string): Expression<SqlBool> {
  const ors: Expression<SqlBool>[] = [];
  if (f.nameLike !== null) ors.push(likeContains(`${alias}.nombre_norm`, f.nameLike));
  if (f.digitsLike !== null) ors.push(likeContains(`${alias}.telefono_digits`, f.digitsLike));
  return ors.length === 1 ? ors[0]! : sql<SqlBool>`(${sql.join(ors, sql` or `)})`;
}

/** FTS5 query: each needle is a quoted phrase (its trigrams, consecutive) in its column. */
function ftsMatch(f: ClientasFilter): string {
  const phrase = (s: string) => `"${s.replace(/"/g, '""')}"`;
  const parts: string[] = [];
  if (f.nameLike !== null) parts.push(`nombre_norm : ${phrase(f.nameLike)}`);
  if (f.digitsLike !== null) parts.push(`telefono_digits : ${phrase(f.digitsLike)}`);
  return parts.join(' OR ');
}

function inScope(db: Kysely<DB>, clinicId: string, vip: boolean | null) {
  let q = db.selectFrom('clientas as c').where('c.clinic_id', '=', clinicId);
  if (vip !== null) q = q.where('c.vip', '=', vip ? 1 : 0);
  return q;
}

/** How many rows a scope query (inScope and its conditions) holds. */
async function countOf(q: ReturnType<typeof inScope>): Promise<number> {
  return Number((await q.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n);
}

/** SQLite: matches of the FTS query in all clinics (reads the index's doclists only). */
export async function ftsGlobalMatches(db: Kysely<DB>, f: ClientasFilter): Promise<number> {
  const r = await sql<{ n: number }>`select count(*) as n from clientas_fts where clientas_fts match ${ftsMatch(f)}`.execute(db);
  return Number(r.rows[0]?.n ?? 0);
}

/** SQLite: the clinic's matches, counted from the FTS5 index (clientas_search, not the clientas rows). */
export async function countFtsMatches(db: Kysely<DB>, clinicId: string, f: ClientasFilter): Promise<number> {
  const vip =
    f.vip === null
      ? sql``
      : sql` and exists (select 1 from clientas c where c.clinic_id = s.clinic_id and c.id = s.id and c.vip = ${f.vip ? 1 : 0})`;
  const r = await sql<{ n: number }>`select count(*) as n from clientas_fts f cross join clientas_search s on s.rid = f.rowid
    where clientas_fts match ${ftsMatch(f)} and s.clinic_id = ${clinicId}${vip}`.execute(db);
  return Number(r.rows[0]?.n ?? 0);
}

/** The clinic's matches, counted with the LIKE filter (PostgreSQL picks the trigram or the name index). */
export async function countLikeMatches(db: Kysely<DB>, clinicId: string, f: ClientasFilter): Promise<number> {
  return countOf(inScope(db, clinicId, f.vip).where(searchCondition(f, 'c')));
}

/** The clinic's names in `range` (every one a match: they start with the term). */
export async function countInRange(db: Kysely<DB>, clinicId: string, vip: boolean | null, range: NameRange): Promise<number> {
  return countOf(inScope(db, clinicId, vip).where('c.nombre_norm', '>=', range.lo).where('c.nombre_norm', '<', range.hi));
}

/** The clinic's matches that sort before `lo` (the term itself). */
export async function countMatchesBefore(db: Kysely<DB>, clinicId: string, f: ClientasFilter, lo: string): Promise<number> {
  return countOf(inScope(db, clinicId, f.vip).where('c.nombre_norm', '<', lo).where(searchCondition(f, 'c')));
}

/** Page ids by walking the name order; `budget` caps the index entries examined (null: none). */
export async function walkIds(db: Kysely<DB>, clinicId: string, f: ClientasFilter, limit: number, offset: number, budget: number | null) {
  if (budget === null) {
    const rows = await inScope(db, clinicId, f.vip)
      .select('c.id')
      .where(searchCondition(f, 'c'))
      .orderBy('c.nombre_norm')
      .orderBy('c.id')
      .limit(limit)
      .offset(offset)
      .execute();
    return rows.map((r) => r.id);
  }
  const window = inScope(db, clinicId, f.vip)
    .select(['c.id', 'c.nombre_norm', 'c.telefono_digits'])
    .orderBy('c.nombre_norm')
    .orderBy('c.id')
    .limit(budget);
  const rows = await db
    .selectFrom(window.as('w'))
    .select('w.id')
    .where(searchCondition(f, 'w'))
    .orderBy('w.nombre_norm')
    .orderBy('w.id')
    .limit(limit)
    .offset(offset)
    .execute();
  return rows.map((r) => r.id);
}

/** Page ids from every match of the substring index, sorted. */
export async function candidateIds(db: Kysely<DB>, clinicId: string, f: ClientasFilter, limit: number, offset: number): Promise<string[]> {
  if (dialectOf(db) === 'postgres') {
    // MATERIALIZED: the planner must not turn this back into a walk of the name index, which
    // is what failed to fill the page (e.g. "maria" sorts late: the walk would read half the clinic).
    const vip = f.vip === null ? sql`` : sql` and c.vip = ${f.vip ? 1 : 0}`;
    const r = await sql<{ id: string }>`with m as materialized (
        select c.id, c.nombre_norm from clientas c where c.clinic_id = ${clinicId}${vip} and ${searchCondition(f, 'c')})
      select id from m order by nombre_norm, id limit ${limit} offset ${offset}`.execute(db);
    return r.rows.map((x) => x.id);
  }
  // CROSS JOIN keeps the FTS match as the outer loop; the sort is over this clinic's matches only.
  const vip = f.vip === null ? sql`` : sql` and c.vip = ${f.vip ? 1 : 0}`;
  const r = await sql<{ id: string }>`select c.id from clientas_fts f
      cross join clientas_search s on s.rid = f.rowid
      cross join clientas c on c.clinic_id = s.clinic_id and c.id = s.id
    where clientas_fts match ${ftsMatch(f)} and s.clinic_id = ${clinicId}${vip}
    order by c.nombre_norm, c.id limit ${limit} offset ${offset}`.execute(db);
  return r.rows.map((x) => x.id);
}

/** Page ids from the range of names that start with the term: every key there is a match. */
export async function rangeIds(db: Kysely<DB>, clinicId: string, vip: boolean | null, range: NameRange, limit: number, start: number) {
  const rows = await inScope(db, clinicId, vip)
    .select('c.id')
    .where('c.nombre_norm', '>=', range.lo)
    .where('c.nombre_norm', '<', range.hi)
    .orderBy('c.nombre_norm')
    .orderBy('c.id')
    .limit(limit)
    .offset(start)
    .execute();
  return rows.map((r) => r.id);
}
