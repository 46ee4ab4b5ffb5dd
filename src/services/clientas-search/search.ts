// The one entry point of a client listing (services/listings.ts makes one call). Without `q`: the
// page in name order and the per-clinic count. With `q`:
//   1. the search's counts at the clinic's current data version: kept (SearchTotals), or counted
//      now and kept (total, where the matches lie in name order, the scope size);
//   2. the page's path from those counts (plan.ts: pure), run with the SQL of repos/clientas-search.ts;
//   3. the page's rows by primary key (repos/clientas.ts).
// The first search of a term after a write counts before it plans its page, so every page is
// planned with exact counts. One instance per runtime, shared by the API and the dashboard: its
// cache is the process's (see totals.ts).
import type { Kysely } from 'kysely';
import { dialectOf } from '../../db/dialect.js';
import type { DB } from '../../db/schema.js';
import { clientasByIds, countClientas, listClientas, type ClientaRow, type ClientasFilter } from '../../repos/clientas.js';
import {
  candidateIds,
  countFtsMatches,
  countInRange,
  countLikeMatches,
  countMatchesBefore,
  ftsGlobalMatches,
  rangeIds,
  walkIds,
} from '../../repos/clientas-search.js';
import { clientasVersion } from '../../repos/clinics.js';
import {
  ftsProbeNeeded,
  planPage,
  planTotal,
  prefixRange,
  runsWorthCounting,
  SEARCH_TUNING,
  shapeOf,
  type PagePlan,
  type SearchCounts,
  type SearchTuning,
} from './plan.js';
import { SearchTotals } from './totals.js';

export interface ClientasPage {
  rows: ClientaRow[];
  total: number;
}

export interface ClientasSearchOptions {
  /** the paths' thresholds; tests pass small ones to drive small data sets down every path */
  tuning?: SearchTuning;
  /** the kept counts (a test may pass its own to look inside) */
  totals?: SearchTotals;
}

export class ClientasSearch {
  readonly tuning: SearchTuning;
  private readonly totals: SearchTotals;

  constructor(opts: ClientasSearchOptions = {}) {
    this.tuning = opts.tuning ?? SEARCH_TUNING;
    this.totals = opts.totals ?? new SearchTotals();
  }

  async page(
    db: Kysely<DB>,
    clinicId: string,
    f: ClientasFilter,
    limit: number,
    offset: number,
    nowSeconds: number,
  ): Promise<ClientasPage> {
    if (f.nameLike === null && f.digitsLike === null) {
      // Without a search the per-clinic counts answer at once.
      const [rows, total] = await Promise.all([
        listClientas(db, clinicId, f.vip, limit, offset, nowSeconds),
        countClientas(db, clinicId, f.vip),
      ]);
      return { rows, total };
    }
    const counts = await this.keptCounts(db, clinicId, f);
    const plan = planPage({ shape: shapeOf(f), limit, offset, counts, dialect: dialectOf(db) }, this.tuning);
    const ids = await this.pageIds(db, clinicId, f, plan, limit, offset);
    return { rows: await clientasByIds(db, clinicId, ids, nowSeconds), total: counts.total };
  }

  /** The search's counts at the clinic's current version of its clientas: kept, or counted now and kept. */
  private async keptCounts(db: Kysely<DB>, clinicId: string, f: ClientasFilter): Promise<SearchCounts> {
    const key = { clinicId, nameLike: f.nameLike, digitsLike: f.digitsLike, vip: f.vip };
    const version = await clientasVersion(db, clinicId);
    const kept = this.totals.get(key, version);
    if (kept !== undefined) return kept;
    const counts = await this.count(db, clinicId, f);
    this.totals.set(key, version, counts);
    return counts;
  }

  /** Counts a search afresh: its total, its scope, and where its matches lie when that pays. */
  async count(db: Kysely<DB>, clinicId: string, f: ClientasFilter): Promise<SearchCounts> {
    const shape = shapeOf(f);
    const dialect = dialectOf(db);
    const scope = await countClientas(db, clinicId, f.vip);
    if (f.nameLike === null && f.digitsLike === null) return { total: scope, before: null, prefix: null, scope };
    const ftsMatches = ftsProbeNeeded(shape, dialect) ? await ftsGlobalMatches(db, f) : null;
    const total =
      planTotal({ shape, dialect, scope, ftsMatches }, this.tuning) === 'fts'
        ? await countFtsMatches(db, clinicId, f)
        : await countLikeMatches(db, clinicId, f);
    const range = f.nameLike === null ? null : prefixRange(f.nameLike);
    if (range === null || !runsWorthCounting(shape, total, dialect, this.tuning)) return { total, before: null, prefix: null, scope };
    const prefix = await countInRange(db, clinicId, f.vip, range);
    if (prefix === 0) return { total, before: null, prefix: 0, scope };
    // When every match starts with the term, none sorts before it.
    const before = prefix === total ? 0 : await countMatchesBefore(db, clinicId, f, range.lo);
    return { total, before, prefix, scope };
  }

  private async pageIds(
    db: Kysely<DB>,
    clinicId: string,
    f: ClientasFilter,
    plan: PagePlan,
    limit: number,
    offset: number,
  ): Promise<string[]> {
    switch (plan.path) {
      case 'empty':
        return [];
      case 'range':
        return rangeIds(db, clinicId, f.vip, prefixRange(f.nameLike ?? '')!, limit, plan.start);
      case 'candidates':
        return candidateIds(db, clinicId, f, limit, offset);
      case 'walk': {
        const walked = await walkIds(db, clinicId, f, limit, offset, plan.budget);
        if (walked.length === limit || plan.fallback === 'none') return walked;
        return plan.fallback === 'walk' ? walkIds(db, clinicId, f, limit, offset, null) : candidateIds(db, clinicId, f, limit, offset);
      }
    }
  }
}
