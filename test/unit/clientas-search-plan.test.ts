// The client-search planner as tables of numbers, without a database: which path finds a page,
// with what walk budget and fall-back, and how the total is counted. Every row is one decision of
// services/clientas-search/plan.ts with the default tuning unless it says otherwise; that each
// path then gives the right rows is test/db/search.test.ts's job.
import { describe, expect, it } from 'vitest';
import {
  planPage,
  planTotal,
  runsWorthCounting,
  SEARCH_TUNING,
  shapeOf,
  trigramSearchable,
  type PagePlan,
  type SearchCounts,
  type SearchShape,
  type SearchTuning,
} from '../../src/services/clientas-search/plan.js';

/** A name search: "mar" (3 characters, has a prefix range). */
const NAME: SearchShape = { nameChars: 3, digitsChars: null, prefixRange: true };
/** A phone search: "600" is both a name and a digits needle. */
const PHONE: SearchShape = { nameChars: 3, digitsChars: 3, prefixRange: true };
/** Two characters: no trigram index can answer. */
const SHORT: SearchShape = { nameChars: 2, digitsChars: null, prefixRange: true };
/** A name with no prefix range (its last code point is U+10FFFF). */
const NO_RANGE: SearchShape = { nameChars: 4, digitsChars: null, prefixRange: false };

const counts = (total: number, scope: number, runs: { before: number; prefix: number } | null = null): SearchCounts => ({
  total,
  scope,
  before: runs?.before ?? null,
  prefix: runs?.prefix ?? null,
});

describe('planPage', () => {
  const rows: [
    string,
    SearchShape,
    { limit: number; offset: number },
    SearchCounts,
    'sqlite' | 'postgres',
    PagePlan,
    Partial<SearchTuning>?,
  ][] = [
    // No page past the last match: no query at all.
    ['offset at the total', NAME, { limit: 100, offset: 40 }, counts(40, 200_000), 'sqlite', { path: 'empty' }],
    ['no match', NAME, { limit: 100, offset: 0 }, counts(0, 200_000), 'postgres', { path: 'empty' }],
    // A first name: 12,637 matches that start with "maria", after 113,000 names (the bench's case).
    [
      'first page inside the prefix run',
      NAME,
      { limit: 100, offset: 0 },
      counts(12_637, 200_000, { before: 0, prefix: 12_637 }),
      'sqlite',
      { path: 'range', start: 0 },
    ],
    [
      'a page further into the run',
      NAME,
      { limit: 25, offset: 35 },
      counts(100, 200_000, { before: 10, prefix: 50 }),
      'postgres',
      { path: 'range', start: 25 },
    ],
    [
      'the last page, nothing after the run',
      NAME,
      { limit: 25, offset: 40 },
      counts(60, 200_000, { before: 10, prefix: 50 }),
      'sqlite',
      { path: 'range', start: 30 },
    ],
    // Pages that reach the other runs are not range seeks: planned as any common term.
    // (candidates: 12,637 x 60 = 758,220 entries, more than reading all 200,000: the full walk is the fall-back)
    [
      'a page that starts before the run',
      NAME,
      { limit: 25, offset: 0 },
      counts(12_637, 200_000, { before: 10, prefix: 12_000 }),
      'sqlite',
      { path: 'walk', budget: 20_000, fallback: 'walk' },
    ],
    [
      'runs not counted',
      NO_RANGE,
      { limit: 100, offset: 0 },
      counts(500, 1_000),
      'sqlite',
      { path: 'walk', budget: 20_000, fallback: 'none' },
    ],
    // Fewer than 3 characters: no substring index, the whole (filtered) walk.
    [
      'two characters',
      SHORT,
      { limit: 100, offset: 0 },
      counts(453_102, 1_000_000),
      'sqlite',
      { path: 'walk', budget: null, fallback: 'none' },
    ],
    // A rare term: its candidates cost less than the shortest walk (matches x 60 <= budget).
    ['rare on SQLite (333 x 60 <= 20,000)', NAME, { limit: 100, offset: 0 }, counts(333, 1_000_000), 'sqlite', { path: 'candidates' }],
    [
      'not so rare on SQLite (334 x 60 > 20,000)',
      NAME,
      { limit: 100, offset: 0 },
      counts(334, 1_000_000),
      'sqlite',
      { path: 'walk', budget: 20_040, fallback: 'candidates' },
    ],
    ['rare on PostgreSQL (83 x 60 <= 5,000)', PHONE, { limit: 25, offset: 0 }, counts(83, 1_000_000), 'postgres', { path: 'candidates' }],
    // 50 per row: 50,000 entries for rows 900-1,000; the walk may go on to the candidates' cost (60,000)
    [
      'a deep page raises the budget',
      NAME,
      { limit: 100, offset: 900 },
      counts(1_000, 1_000_000),
      'sqlite',
      { path: 'walk', budget: 60_000, fallback: 'candidates' },
    ],
    // A common term: the walk may read twice the expected distance to a full page, while that
    // costs less than the candidates; the 1.5 % phone term in 200,000 clientas of the docs.
    [
      'common phone digits',
      PHONE,
      { limit: 25, offset: 0 },
      counts(2_933, 200_000),
      'postgres',
      { path: 'walk', budget: 5_000, fallback: 'candidates' },
    ],
    [
      'common phone digits, deeper',
      PHONE,
      { limit: 25, offset: 75 },
      counts(2_933, 200_000),
      'postgres',
      { path: 'walk', budget: 13_638, fallback: 'candidates' },
    ],
    [
      '"mar" in a million',
      NAME,
      { limit: 100, offset: 0 },
      counts(162_028, 1_000_000),
      'sqlite',
      { path: 'walk', budget: 20_000, fallback: 'walk' },
    ],
    // The walk's budget covers the whole scope: whatever it finds is the exact page.
    ['small clinic', NAME, { limit: 100, offset: 0 }, counts(500, 4_000), 'sqlite', { path: 'walk', budget: 20_000, fallback: 'none' }],
    // Candidates would cost more than reading every entry: the unbounded walk is the fall-back.
    // twice the expected distance: 2 x 10 x 1,504 / 40 = 752 entries
    [
      'twice the expected distance, then the full walk',
      NAME,
      { limit: 7, offset: 3 },
      counts(40, 1_504),
      'postgres',
      { path: 'walk', budget: 752, fallback: 'walk' },
      { pgWalkMinBudget: 50, walkBudgetPerRow: 1, ftsPageCost: 1e9 },
    ],
    [
      'candidates dearer than the scope, small budget',
      NAME,
      { limit: 7, offset: 3 },
      counts(400, 100_000),
      'sqlite',
      { path: 'walk', budget: 5_000, fallback: 'walk' },
      { walkMinBudget: 50, walkBudgetPerRow: 1, ftsPageCost: 1e9 },
    ],
    [
      'matches cost almost nothing',
      NAME,
      { limit: 7, offset: 3 },
      counts(40_000, 100_000),
      'sqlite',
      { path: 'candidates' },
      { ftsPageCost: 1e-9 },
    ],
  ];

  it.each(rows)('%s', (_label, shape, page, known, dialect, want, tuning) => {
    expect(planPage({ shape, ...page, counts: known, dialect }, { ...SEARCH_TUNING, ...tuning })).toEqual(want);
  });

  it('uses the default tuning when none is given, and the default is frozen', () => {
    expect(planPage({ shape: NAME, limit: 100, offset: 0, counts: counts(333, 1_000_000), dialect: 'sqlite' })).toEqual({
      path: 'candidates',
    });
    expect(Object.isFrozen(SEARCH_TUNING)).toBe(true);
  });
});

describe('planTotal', () => {
  const rows: [string, SearchShape, 'sqlite' | 'postgres', number, number | null, 'fts' | 'like'][] = [
    // SQLite: FTS5 matches of all clinics x 8 against the clinic's scope.
    ['SQLite, few matches anywhere', NAME, 'sqlite', 200_000, 25_000, 'fts'],
    ['SQLite, too common', NAME, 'sqlite', 200_000, 25_001, 'like'],
    ['SQLite, phone digits', PHONE, 'sqlite', 10_000, 12, 'fts'],
    ['SQLite, two characters: no trigrams', SHORT, 'sqlite', 200_000, null, 'like'],
    // PostgreSQL picks its index from its statistics: always the LIKE count.
    ['PostgreSQL', NAME, 'postgres', 200_000, null, 'like'],
  ];
  it.each(rows)('%s', (_label, shape, dialect, scope, ftsMatches, want) => {
    expect(planTotal({ shape, dialect, scope, ftsMatches })).toBe(want);
  });
});

describe('runsWorthCounting', () => {
  it('counts where the matches lie only for a term with a prefix range too common for its candidates', () => {
    expect(runsWorthCounting(NAME, 334, 'sqlite')).toBe(true); // 334 x 60 > 20,000
    expect(runsWorthCounting(NAME, 333, 'sqlite')).toBe(false);
    expect(runsWorthCounting(NAME, 84, 'postgres')).toBe(true); // 84 x 60 > 5,000
    expect(runsWorthCounting(NAME, 83, 'postgres')).toBe(false);
    expect(runsWorthCounting(NO_RANGE, 1_000_000, 'sqlite')).toBe(false);
    expect(runsWorthCounting(NAME, 10, 'sqlite', { ...SEARCH_TUNING, walkMinBudget: 50 })).toBe(true);
  });
});

describe('shapeOf', () => {
  it('measures needles in code points and knows when a prefix range exists', () => {
    expect(shapeOf({ nameLike: 'maría', digitsLike: null })).toEqual({ nameChars: 5, digitsChars: null, prefixRange: true });
    expect(shapeOf({ nameLike: '😀😀', digitsLike: null })).toEqual({ nameChars: 2, digitsChars: null, prefixRange: true });
    expect(shapeOf({ nameLike: '600 12', digitsLike: '60012' })).toEqual({ nameChars: 6, digitsChars: 5, prefixRange: true });
    expect(shapeOf({ nameLike: 'a\u{10ffff}', digitsLike: null }).prefixRange).toBe(false);
    expect(trigramSearchable(shapeOf({ nameLike: '😀😀😀', digitsLike: null }))).toBe(true);
    expect(trigramSearchable(shapeOf({ nameLike: '6 0', digitsLike: '60' }))).toBe(false);
  });
});
