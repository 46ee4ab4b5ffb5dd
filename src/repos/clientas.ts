// Client queries. Ordering is (nombre_norm, id), served by (clinic_id, nombre_norm, id, +telefono_digits)
// and (clinic_id, vip, nombre_norm, id, +telefono_digits). Derived fields are computed for the page
// only, each by an index seek on (clinic_id, clienta_id, fecha_hora) of citas and llamadas.
//
// A search (`q`) is answered in two steps: the page's ids, then their rows. The ids come from
// whichever of two paths is cheap for this search (see docs/postgres.md, "Search"):
//  - walk: the name-ordered index, filtered on the index entries themselves, for at most a
//    budget of entries. Common terms fill a page within a few hundred entries.
//  - candidates: the substring index (pg_trgm GIN / SQLite FTS5 trigram) gives every match,
//    which is sorted. Rare terms have few matches. Only when the walk did not fill the page.
import { sql, type Expression, type Kysely, type SqlBool } from 'kysely';
import { dialectOf } from '../db/dialect.js';
import type { DB } from '../db/schema.js';

export interface ClientasFilter {
  /** normalised (lower-case, accent-free) name substring, or null */
  nameLike: string | null;
  /** digits to find inside the phone's digits, or null */
  digitsLike: string | null;
  vip: boolean | null;
}

export interface ClientaRow {
  id: string;
  nombre: string;
  telefono: string;
  email: string | null;
  idioma: string | null;
  vip: number;
  cliente_desde: string;
  created_at: number;
  total_citas: number;
  total_llamadas: number;
  ultima_cita: number | null;
  ultima_llamada: number | null;
}

/**
 * Thresholds of the search paths, in "index entries a walk reads" (measured: docs/postgres.md).
 * Mutable only so that tests can drive small data sets down every path.
 */
export const SEARCH_TUNING = {
  /** The fewest index entries a walk may examine before the substring index takes over (SQLite)... */
  walkMinBudget: 20_000,
  /** ... on PostgreSQL, where an index entry costs more to read and a look-up less. */
  pgWalkMinBudget: 5_000,
  /** ... and per row of the page asked for, so deep pages of common terms still walk. */
  walkBudgetPerRow: 50,
  /**
   * SQLite: the FTS5 index is shared by all clinics, and what a match costs depends on the use:
   * counting reads clientas_search only (ftsCountCost), a page reads and sorts the clientas rows
   * (ftsPageCost). When the term is too common, the clinic's own walk is cheaper.
   */
  ftsCountCost: 8,
  ftsPageCost: 60,
};

const hasSearch = (f: ClientasFilter) => f.nameLike !== null || f.digitsLike !== null;
const chars = (s: string) => [...s].length;

/** Trigram indexes can only answer needles of 3 characters or more. */
function trigramSearchable(f: ClientasFilter): boolean {
  return hasSearch(f) && (f.nameLike === null || chars(f.nameLike) >= 3) && (f.digitsLike === null || chars(f.digitsLike) >= 3);
}

function escapeLike(s: string): string {
  return s.replace(/[\\%_]/g, (ch) => `\\${ch}`);
}

function likeContains(column: string, needle: string): Expression<SqlBool> {
  return sql<SqlBool>`${sql.ref(column)} like ${`%${escapeLike(needle)}%`} escape '\\'`;
}

function searchCondition(f: ClientasFilter, alias: string): Expression<SqlBool> {
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

/** The clinic's clientas in the filter's vip scope, from the per-clinic counts. */
async function scopeSize(db: Kysely<DB>, clinicId: string, vip: boolean | null): Promise<number> {
  let q = db
    .selectFrom('clientas_por_vip')
    .select((eb) => eb.fn.sum<number | string | null>('n').as('total'))
    .where('clinic_id', '=', clinicId);
  if (vip !== null) q = q.where('vip', '=', vip ? 1 : 0);
  const row = await q.executeTakeFirst();
  return Number(row?.total ?? 0);
}

/** SQLite: matches of the FTS query in all clinics (reads the index's doclists only). */
async function ftsGlobalMatches(db: Kysely<DB>, f: ClientasFilter): Promise<number> {
  const r = await sql<{ n: number }>`select count(*) as n from clientas_fts where clientas_fts match ${ftsMatch(f)}`.execute(db);
  return Number(r.rows[0]?.n ?? 0);
}

function inScope(db: Kysely<DB>, clinicId: string, f: ClientasFilter) {
  let q = db.selectFrom('clientas as c').where('c.clinic_id', '=', clinicId);
  if (f.vip !== null) q = q.where('c.vip', '=', f.vip ? 1 : 0);
  return q;
}

/** Page ids by walking the name order; `budget` caps the index entries examined (null: none). */
async function walkIds(db: Kysely<DB>, clinicId: string, f: ClientasFilter, limit: number, offset: number, budget: number | null) {
  if (budget === null) {
    const rows = await inScope(db, clinicId, f).select('c.id').where(searchCondition(f, 'c'))
      .orderBy('c.nombre_norm').orderBy('c.id').limit(limit).offset(offset).execute();
    return rows.map((r) => r.id);
  }
  const window = inScope(db, clinicId, f).select(['c.id', 'c.nombre_norm', 'c.telefono_digits'])
    .orderBy('c.nombre_norm').orderBy('c.id').limit(budget);
  const rows = await db.selectFrom(window.as('w')).select('w.id').where(searchCondition(f, 'w'))
    .orderBy('w.nombre_norm').orderBy('w.id').limit(limit).offset(offset).execute();
  return rows.map((r) => r.id);
}

/** Page ids from every match of the substring index, sorted. */
async function candidateIds(db: Kysely<DB>, clinicId: string, f: ClientasFilter, limit: number, offset: number): Promise<string[]> {
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

async function searchIds(
  db: Kysely<DB>, clinicId: string, f: ClientasFilter, limit: number, offset: number, knownMatches: number | undefined,
): Promise<string[]> {
  // The clinic's exact number of matches, when the caller has it (a kept total): no page past it.
  if (knownMatches !== undefined && knownMatches <= offset) return [];
  if (!trigramSearchable(f)) return walkIds(db, clinicId, f, limit, offset, null);
  const sqlite = dialectOf(db) === 'sqlite';
  const minBudget = sqlite ? SEARCH_TUNING.walkMinBudget : SEARCH_TUNING.pgWalkMinBudget;
  const budget = Math.max(minBudget, SEARCH_TUNING.walkBudgetPerRow * (offset + limit));
  // A rare term goes straight to its matches, a term too common for them gets the clinic's own
  // walk. The clinic's own count decides when known; else SQLite asks FTS5 (its doclists, all
  // clinics: cheap, but it grows with the term's matches), and PostgreSQL tries the walk first.
  const matches = knownMatches ?? (sqlite ? await ftsGlobalMatches(db, f) : null);
  const global = matches === null ? null : matches * SEARCH_TUNING.ftsPageCost;
  if (global !== null && global <= budget) return candidateIds(db, clinicId, f, limit, offset);
  const scope = await scopeSize(db, clinicId, f.vip);
  // With the clinic's own count, the walk's length is known on average: (offset + limit) x
  // scope / matches entries. Twice that may be walked while it stays below what the candidates
  // would cost (e.g. a 1.5 % phone term in 200,000 clientas: 13,600 entries, not 176,000).
  const expected = knownMatches === undefined ? 0 : Math.ceil((2 * (offset + limit) * scope) / Math.max(1, knownMatches));
  const walkBudget = global === null ? budget : Math.max(budget, Math.min(expected, global));
  const walked = await walkIds(db, clinicId, f, limit, offset, walkBudget);
  // A full page, or a walk that saw every row of the scope, is the exact answer.
  if (walked.length === limit || scope <= walkBudget) return walked;
  if (global !== null && global > scope) return walkIds(db, clinicId, f, limit, offset, null);
  return candidateIds(db, clinicId, f, limit, offset);
}

function withDerived(db: Kysely<DB>, clinicId: string, nowSeconds: number) {
  return db.selectFrom('clientas as c').where('c.clinic_id', '=', clinicId).select((eb) => [
    'c.id', 'c.nombre', 'c.telefono', 'c.email', 'c.idioma', 'c.vip', 'c.cliente_desde', 'c.created_at',
    eb.selectFrom('citas as ci').select((e) => e.fn.countAll<number>().as('n'))
      .whereRef('ci.clinic_id', '=', 'c.clinic_id').whereRef('ci.clienta_id', '=', 'c.id')
      .as('total_citas'),
    eb.selectFrom('llamadas as l').select((e) => e.fn.countAll<number>().as('n'))
      .whereRef('l.clinic_id', '=', 'c.clinic_id').whereRef('l.clienta_id', '=', 'c.id')
      .as('total_llamadas'),
    eb.selectFrom('citas as ci').select((e) => e.fn.max<number | null>('ci.fecha_hora').as('m'))
      .whereRef('ci.clinic_id', '=', 'c.clinic_id').whereRef('ci.clienta_id', '=', 'c.id')
      .where('ci.fecha_hora', '<=', nowSeconds)
      .as('ultima_cita'),
    eb.selectFrom('llamadas as l').select((e) => e.fn.max<number | null>('l.fecha_hora').as('m'))
      .whereRef('l.clinic_id', '=', 'c.clinic_id').whereRef('l.clienta_id', '=', 'c.id')
      .as('ultima_llamada'),
  ]);
}

/** `knownMatches`: the clinic's exact number of matches of `f`, if known (it only guides the plan). */
export async function listClientas(
  db: Kysely<DB>,
  clinicId: string,
  f: ClientasFilter,
  limit: number,
  offset: number,
  nowSeconds: number,
  knownMatches?: number,
): Promise<ClientaRow[]> {
  if (!hasSearch(f)) {
    let q = withDerived(db, clinicId, nowSeconds);
    if (f.vip !== null) q = q.where('c.vip', '=', f.vip ? 1 : 0);
    return q.orderBy('c.nombre_norm').orderBy('c.id').limit(limit).offset(offset).execute() as Promise<ClientaRow[]>;
  }
  const ids = await searchIds(db, clinicId, f, limit, offset, knownMatches);
  if (ids.length === 0) return [];
  // Primary-key look-ups, put back in the page's order here: with an ORDER BY, SQLite would
  // rather walk the clinic's whole name index than sort a page.
  const rows = (await withDerived(db, clinicId, nowSeconds).where('c.id', 'in', ids).execute()) as ClientaRow[];
  const at = new Map(ids.map((id, i) => [id, i]));
  return rows.sort((a, b) => at.get(a.id)! - at.get(b.id)!);
}

export async function countClientas(db: Kysely<DB>, clinicId: string, f: ClientasFilter): Promise<number> {
  // Without a search, the per-clinic counts answer without touching the clientas rows.
  if (!hasSearch(f)) return scopeSize(db, clinicId, f.vip);
  if (dialectOf(db) === 'sqlite' && trigramSearchable(f)) {
    const scope = await scopeSize(db, clinicId, f.vip);
    if ((await ftsGlobalMatches(db, f)) * SEARCH_TUNING.ftsCountCost <= scope) {
      const vip = f.vip === null
        ? sql``
        : sql` and exists (select 1 from clientas c where c.clinic_id = s.clinic_id and c.id = s.id and c.vip = ${f.vip ? 1 : 0})`;
      const r = await sql<{ n: number }>`select count(*) as n from clientas_fts f cross join clientas_search s on s.rid = f.rowid
        where clientas_fts match ${ftsMatch(f)} and s.clinic_id = ${clinicId}${vip}`.execute(db);
      return Number(r.rows[0]?.n ?? 0);
    }
  }
  // PostgreSQL picks the trigram index or the clinic's name index itself, from its statistics.
  const row = await inScope(db, clinicId, f).where(searchCondition(f, 'c'))
    .select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
  return Number(row.n);
}
