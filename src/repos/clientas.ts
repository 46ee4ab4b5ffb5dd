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
// With kept counts (searchCounts) a third path comes first: names that start with the term are
// one range of the name index, so a page inside that range is a range seek (see prefixRange).
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
 * A search's matches in name order are three runs: those before the term itself, those that
 * start with it (a range of the name index), and those after. `before` and `prefix` are null
 * when they were not counted (a rare term: its candidates are cheap anyway).
 */
export interface SearchCounts {
  total: number;
  before: number | null;
  prefix: number | null;
}

/**
 * The keys that start with `needle`: [lo, hi) in code-point order, which is the order of both
 * databases here (SQLite's BINARY collation compares UTF-8 bytes; PostgreSQL's columns are
 * COLLATE "C"). hi is the needle with its last code point incremented; null when there is none.
 */
export function prefixRange(needle: string): { lo: string; hi: string } | null {
  // A lone surrogate (\p{Cs}) has no UTF-8 form to compare.
  if (needle === '' || /\p{Cs}/u.test(needle)) return null;
  const cps = [...needle];
  const last = cps.pop()!.codePointAt(0)!;
  if (last === 0x10ffff) return null;
  // The surrogate block is not a code point a well-formed string can hold.
  const next = last === 0xd7ff ? 0xe000 : last + 1;
  return { lo: needle, hi: cps.join('') + String.fromCodePoint(next) };
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

/** How many rows a scope query (inScope and its conditions) holds. */
async function countOf(q: ReturnType<typeof inScope>): Promise<number> {
  return Number((await q.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n);
}

/** The fewest index entries a walk may examine before the substring index takes over. */
function walkMinBudget(db: Kysely<DB>): number {
  return dialectOf(db) === 'sqlite' ? SEARCH_TUNING.walkMinBudget : SEARCH_TUNING.pgWalkMinBudget;
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

/**
 * The offset into the prefix range at which the page [offset, offset + limit) starts, when the
 * whole page lies in that range (or runs from it to the end of the matches); else null.
 */
export function prefixRangeOffset(known: SearchCounts, offset: number, limit: number): number | null {
  if (known.before === null || known.prefix === null || known.prefix === 0) return null;
  const start = offset - known.before;
  const end = known.before + known.prefix;
  if (start < 0 || start >= known.prefix) return null;
  return offset + limit <= end || end === known.total ? start : null;
}

/** Page ids from the range of names that start with the term: every key there is a match. */
async function rangeIds(db: Kysely<DB>, clinicId: string, f: ClientasFilter, range: { lo: string; hi: string }, limit: number, start: number) {
  const rows = await inScope(db, clinicId, f).select('c.id')
    .where('c.nombre_norm', '>=', range.lo).where('c.nombre_norm', '<', range.hi)
    .orderBy('c.nombre_norm').orderBy('c.id').limit(limit).offset(start).execute();
  return rows.map((r) => r.id);
}

async function searchIds(
  db: Kysely<DB>, clinicId: string, f: ClientasFilter, limit: number, offset: number, known: SearchCounts | undefined,
): Promise<string[]> {
  // The clinic's exact number of matches, when the caller has it (kept counts): no page past it.
  const knownMatches = known?.total;
  if (knownMatches !== undefined && knownMatches <= offset) return [];
  // "maria" in a Spanish clinic: thousands of matches, all after half of the name order, where
  // a walk from the start would read 100,000 entries. They are names that start with the term.
  const range = f.nameLike === null ? null : prefixRange(f.nameLike);
  const start = known === undefined || range === null ? null : prefixRangeOffset(known, offset, limit);
  if (range !== null && start !== null) return rangeIds(db, clinicId, f, range, limit, start);
  if (!trigramSearchable(f)) return walkIds(db, clinicId, f, limit, offset, null);
  const sqlite = dialectOf(db) === 'sqlite';
  const budget = Math.max(walkMinBudget(db), SEARCH_TUNING.walkBudgetPerRow * (offset + limit));
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

/** `known`: the clinic's exact counts of the matches of `f`, if kept (they only guide the plan). */
export async function listClientas(
  db: Kysely<DB>,
  clinicId: string,
  f: ClientasFilter,
  limit: number,
  offset: number,
  nowSeconds: number,
  known?: SearchCounts,
): Promise<ClientaRow[]> {
  if (!hasSearch(f)) {
    let q = withDerived(db, clinicId, nowSeconds);
    if (f.vip !== null) q = q.where('c.vip', '=', f.vip ? 1 : 0);
    return q.orderBy('c.nombre_norm').orderBy('c.id').limit(limit).offset(offset).execute() as Promise<ClientaRow[]>;
  }
  const ids = await searchIds(db, clinicId, f, limit, offset, known);
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
  return countOf(inScope(db, clinicId, f).where(searchCondition(f, 'c')));
}

/**
 * A search's total, and where its matches lie in name order (SearchCounts), for keeping. The
 * extra counts cost the range of names that start with the term, and, when other matches exist,
 * the names before the term: paid once per version of the clinic's clientas, and only for terms
 * too common for their candidates.
 */
export async function searchCounts(db: Kysely<DB>, clinicId: string, f: ClientasFilter): Promise<SearchCounts> {
  const total = await countClientas(db, clinicId, f);
  const range = f.nameLike === null ? null : prefixRange(f.nameLike);
  if (range === null || total * SEARCH_TUNING.ftsPageCost <= walkMinBudget(db)) return { total, before: null, prefix: null };
  const prefix = await countOf(inScope(db, clinicId, f).where('c.nombre_norm', '>=', range.lo).where('c.nombre_norm', '<', range.hi));
  if (prefix === 0) return { total, before: null, prefix: 0 };
  const before = prefix === total ? 0 : await countOf(inScope(db, clinicId, f).where('c.nombre_norm', '<', range.lo).where(searchCondition(f, 'c')));
  return { total, before, prefix };
}
