// How to answer a client search (`q`): which path finds the page, with what budget, and how to
// count the matches. Pure functions of numbers (the filter's shape, the page, the kept counts,
// the dialect, the tuning), tested as tables without a database (test/unit/clientas-search-plan.test.ts).
// ClientasSearch (./search.ts) runs the plan; the SQL of each path is in repos/clientas-search.ts.
// Why these paths and thresholds: docs/postgres.md, "Search".
//
// A page of a search comes from one of three paths:
//  - range: names that start with the term are one range of the name index; when the kept counts
//    place the whole page in it, the page is a range seek (no filter, no sort).
//  - walk: the name-ordered index, filtered on its own entries, for at most `budget` entries
//    (or all of them). A common term fills a page within a few hundred entries.
//  - candidates: every match of the substring index (pg_trgm GIN / SQLite FTS5 trigram), sorted.
//    Cheap for a rare term; needles of 3 characters or more only.
import type { Dialect } from '../../db/dialect.js';

/** Thresholds of the paths, in "index entries a walk reads" (measured: docs/postgres.md). */
export interface SearchTuning {
  /** The fewest index entries a walk may examine before the substring index takes over (SQLite)... */
  readonly walkMinBudget: number;
  /** ... on PostgreSQL, where an index entry costs more to read and a look-up less. */
  readonly pgWalkMinBudget: number;
  /** ... and per row of the page asked for, so deep pages of common terms still walk. */
  readonly walkBudgetPerRow: number;
  /**
   * What a match costs in walk entries, depending on the use. SQLite's FTS5 index is shared by all
   * clinics: counting reads clientas_search only (ftsCountCost), a page reads and sorts the
   * clientas rows (ftsPageCost, also the cost of a PostgreSQL candidate). When the term is too
   * common, the clinic's own walk is cheaper.
   */
  readonly ftsCountCost: number;
  readonly ftsPageCost: number;
}

export const SEARCH_TUNING: SearchTuning = Object.freeze({
  walkMinBudget: 20_000,
  pgWalkMinBudget: 5_000,
  walkBudgetPerRow: 50,
  ftsCountCost: 8,
  ftsPageCost: 60,
});

/** What the plan needs of a filter: its needles' lengths, and whether its name has a prefix range. */
export interface SearchShape {
  /** characters of the normalised name needle; null when the filter has none */
  nameChars: number | null;
  /** digits of the phone needle; null when the filter has none */
  digitsChars: number | null;
  /** whether the names that start with the name needle are a range of the name index (prefixRange) */
  prefixRange: boolean;
}

/**
 * A search's matches in the clinic, counted once per version of its clientas (kept by
 * SearchTotals). In name order they are three runs: those before the term itself, those that
 * start with it (a range of the name index), and those after. `before` and `prefix` are null when
 * they were not counted (a rare term: its candidates are cheap anyway).
 */
export interface SearchCounts {
  total: number;
  before: number | null;
  prefix: number | null;
  /** the clinic's clientas in the filter's vip scope: every entry a walk could read */
  scope: number;
}

export type PagePlan =
  /** the page lies past the last match: no query */
  | { path: 'empty' }
  /** a range seek into the names that start with the term, from the `start`-th of them */
  | { path: 'range'; start: number }
  /** every match from the substring index, sorted */
  | { path: 'candidates' }
  /**
   * The name index, filtered, for at most `budget` entries (null: all). When that does not fill
   * the page, `fallback` finds it: 'none' (the walk read the whole scope, so its page is exact),
   * 'walk' (every entry), or 'candidates'.
   */
  | { path: 'walk'; budget: number | null; fallback: 'none' | 'walk' | 'candidates' };

export interface PageInput {
  shape: SearchShape;
  limit: number;
  offset: number;
  counts: SearchCounts;
  dialect: Dialect;
}

/** How to count the total: the FTS5 matches of this clinic, or the LIKE filter (walk or index). */
export type TotalPath = 'fts' | 'like';

export interface TotalInput {
  shape: SearchShape;
  dialect: Dialect;
  scope: number;
  /** SQLite: the FTS5 index's matches in all clinics (when ftsProbeNeeded), else null */
  ftsMatches: number | null;
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

export function shapeOf(f: { nameLike: string | null; digitsLike: string | null }): SearchShape {
  return {
    nameChars: f.nameLike === null ? null : [...f.nameLike].length,
    digitsChars: f.digitsLike === null ? null : [...f.digitsLike].length,
    prefixRange: f.nameLike !== null && prefixRange(f.nameLike) !== null,
  };
}

/** Trigram indexes can only answer needles of 3 characters or more. */
export function trigramSearchable(s: SearchShape): boolean {
  return (
    (s.nameChars !== null || s.digitsChars !== null) &&
    (s.nameChars === null || s.nameChars >= 3) &&
    (s.digitsChars === null || s.digitsChars >= 3)
  );
}

/** The fewest index entries a walk may examine before the substring index takes over. */
export function walkMinBudget(dialect: Dialect, t: SearchTuning): number {
  return dialect === 'sqlite' ? t.walkMinBudget : t.pgWalkMinBudget;
}

/**
 * The offset into the prefix range at which the page [offset, offset + limit) starts, when the
 * whole page lies in that range (or runs from it to the end of the matches); else null.
 */
export function prefixRangeOffset(known: Pick<SearchCounts, 'total' | 'before' | 'prefix'>, offset: number, limit: number): number | null {
  if (known.before === null || known.prefix === null || known.prefix === 0) return null;
  const start = offset - known.before;
  const end = known.before + known.prefix;
  if (start < 0 || start >= known.prefix) return null;
  return offset + limit <= end || end === known.total ? start : null;
}

/** The path that finds a page of a search, given the search's kept counts. */
export function planPage(i: PageInput, t: SearchTuning = SEARCH_TUNING): PagePlan {
  const { shape, limit, offset, counts } = i;
  if (counts.total <= offset) return { path: 'empty' };
  // "maria" in a Spanish clinic: thousands of matches, all after half of the name order, where
  // a walk from the start would read 100,000 entries. They are names that start with the term.
  const start = shape.prefixRange ? prefixRangeOffset(counts, offset, limit) : null;
  if (start !== null) return { path: 'range', start };
  if (!trigramSearchable(shape)) return { path: 'walk', budget: null, fallback: 'none' };
  const budget = Math.max(walkMinBudget(i.dialect, t), t.walkBudgetPerRow * (offset + limit));
  // A rare term goes straight to its matches; a term too common for them gets the clinic's walk.
  const candidates = counts.total * t.ftsPageCost;
  if (candidates <= budget) return { path: 'candidates' };
  // The walk's length is known on average: (offset + limit) x scope / matches entries. Twice that
  // may be walked while it stays below what the candidates would cost (e.g. a 1.5 % phone term in
  // 200,000 clientas: 13,600 entries, not 176,000).
  const expected = Math.ceil((2 * (offset + limit) * counts.scope) / Math.max(1, counts.total));
  const walk = Math.max(budget, Math.min(expected, candidates));
  // A walk that reads the whole scope is the exact answer, full page or not.
  const fallback = counts.scope <= walk ? 'none' : candidates > counts.scope ? 'walk' : 'candidates';
  return { path: 'walk', budget: walk, fallback };
}

/** SQLite: whether the total's plan needs the FTS5 index's global match count (its doclists: cheap). */
export function ftsProbeNeeded(shape: SearchShape, dialect: Dialect): boolean {
  return dialect === 'sqlite' && trigramSearchable(shape);
}

/**
 * How to count a search's total. SQLite counts the clinic's FTS5 matches when the term's matches
 * in all clinics cost less than the clinic's walk; PostgreSQL always sends the LIKE count and picks
 * the trigram index or the clinic's name index itself, from its statistics.
 */
export function planTotal(i: TotalInput, t: SearchTuning = SEARCH_TUNING): TotalPath {
  if (!ftsProbeNeeded(i.shape, i.dialect) || i.ftsMatches === null) return 'like';
  return i.ftsMatches * t.ftsCountCost <= i.scope ? 'fts' : 'like';
}

/**
 * Whether to count where the matches lie (the prefix run, then what sorts before it): paid once
 * per version, and only for a term with a prefix range that is too common for its candidates (a
 * rare term's page is cheap without them).
 */
export function runsWorthCounting(shape: SearchShape, total: number, dialect: Dialect, t: SearchTuning = SEARCH_TUNING): boolean {
  return shape.prefixRange && total * t.ftsPageCost > walkMinBudget(dialect, t);
}
