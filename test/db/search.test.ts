// `q` on /clientas: every search path (range seek, budgeted walk and its fall-backs, substring
// index candidates, full walk) must give exactly what a plain filter-and-sort of all rows gives, on
// both databases, including totals, deep pages, LIKE metacharacters and other clinics' rows. Small
// tunings drive this small data set down each path (the planner's own table: clientas-search-plan.test.ts).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/connect.js';
import type { ImportRecord } from '../../src/domain/records.js';
import { generateDemo } from '../../src/demo/generate.js';
import { clientasVersion, type Clinic } from '../../src/repos/clinics.js';
import { createClinic } from '../../src/services/accounts.js';
import { SEARCH_TUNING, type SearchTuning } from '../../src/services/clientas-search/plan.js';
import { ClientasSearch } from '../../src/services/clientas-search/search.js';
import { SearchTotals } from '../../src/services/clientas-search/totals.js';
import { clientasPage, type ClinicContext } from '../../src/services/listings.js';
import { looksLikePhone, normalizeName, phoneDigits } from '../../src/domain/normalize.js';
import { seedRecords } from '../helpers/app.js';
import { dialects, freshDatabase } from '../helpers/db.js';
import { clientaRecord } from '../helpers/fixtures.js';

const NOW = Date.UTC(2026, 2, 28, 12, 0, 0);

type ClientaRecord = Extract<ImportRecord, { type: 'clienta' }>;

function demoClientas(seed: number, n: number): ClientaRecord[] {
  const out: ClientaRecord[] = [];
  for (const r of generateDemo({ seed, scale: n / 200, today: '2026-03-28', timeZone: 'Europe/Madrid', nowSeconds: NOW / 1000 })) {
    if (r.type !== 'clienta' || out.length === n) break;
    out.push(r);
  }
  return out;
}

const extra = (id: string, nombre: string, telefono: string, vip = false) => clientaRecord(id, nombre, telefono, { vip }) as ClientaRecord;

/** Names that exercise LIKE metacharacters, FTS5 syntax and accents. */
const SPECIAL: ClientaRecord[] = [
  extra('0d000001-0000-4000-8000-000000000001', 'Ana 100%_Ruiz', '+34633444555'),
  extra('0d000001-0000-4000-8000-000000000002', 'Zoë "Quote" O\'Neil', '+34633444556', true),
  extra('0d000001-0000-4000-8000-000000000003', 'Jürgen Back\\slash', '+491601234567'),
  extra('0d000001-0000-4000-8000-000000000004', 'Ñandú Peña AND OR NOT', '+34600000001'),
];

/** The answer by definition: filter every row in memory, sort by (nombre_norm, id). */
function expected(rows: ClientaRecord[], q: string | undefined, vip: boolean | undefined) {
  const s = q?.trim() ?? '';
  const name = normalizeName(s);
  const digits = s !== '' && looksLikePhone(s) ? phoneDigits(s) : null;
  const hits = rows.filter(
    (r) =>
      (vip === undefined || r.vip === vip) &&
      (s === '' || normalizeName(r.nombre).includes(name) || (digits !== null && phoneDigits(r.telefono).includes(digits))),
  );
  const key = (r: ClientaRecord) => normalizeName(r.nombre);
  hits.sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  return hits.map((r) => r.id);
}

const QUERIES = [
  'mar',
  'maria',
  'María José',
  'garcia lopez',
  'ez',
  'a',
  'zzz',
  'isabel',
  'ANA',
  'ñandú',
  'nandu',
  '100%',
  '%_',
  '_',
  'quote"',
  '"',
  "o'neil",
  'back\\sl',
  'and or',
  'not',
  'ü',
  'peña and',
  '600',
  '34 6',
  '+34 633 444 55',
  '(633) 444',
  '6',
  '555',
  'lópez',
  ' mar ',
  'rodriguez sanchez',
];

const TUNINGS: Record<string, Partial<SearchTuning>> = {
  // defaults: this data set is smaller than the walk budget: rare terms take their candidates,
  // the others walk the whole scope
  'default thresholds': {},
  // a walk of 50 entries rarely fills a page: the substring index (GIN / FTS5) answers, and
  // common first names are range seeks
  'substring index': { walkMinBudget: 50, pgWalkMinBudget: 50, walkBudgetPerRow: 1 },
  // a match costs so little that every search goes straight to its candidates
  'substring index first': { ftsPageCost: 1e-9, ftsCountCost: 1e-9 },
  // matches look expensive, so a walk that does not fill the page falls back to the full walk
  'fall-back scan': { walkMinBudget: 50, pgWalkMinBudget: 50, walkBudgetPerRow: 1, ftsPageCost: 1e9, ftsCountCost: 1e9 },
};

describe.each(dialects())('clientas search on %s', (dialect) => {
  let database: Database;
  let clinic: Clinic;
  let other: Clinic;
  let rows: ClientaRecord[];
  const ctx = (c: Clinic): ClinicContext => ({ clinicId: c.id, timezone: c.timezone, currency: c.currency });

  beforeAll(async () => {
    database = await freshDatabase(dialect);
    clinic = await createClinic(database.db, { name: 'Grande', timezone: 'Europe/Madrid', currency: 'EUR', plan: 'premium' }, NOW);
    other = await createClinic(database.db, { name: 'Otra', timezone: 'Europe/Madrid', currency: 'EUR', plan: 'premium' }, NOW);
    rows = [...demoClientas(11, 1500), ...SPECIAL];
    await seedRecords(database, clinic, rows);
    // Same names in another clinic (different ids): never found from the first one.
    await seedRecords(
      database,
      other,
      demoClientas(11, 1500).map((r, i) => ({ ...r, id: `0e000001-0000-4000-8000-${String(i).padStart(12, '0')}` })),
    );
  });
  afterAll(async () => {
    await database?.close();
  });
  const searchWith = (tuning: Partial<SearchTuning>, totals?: SearchTotals) =>
    new ClientasSearch({ tuning: { ...SEARCH_TUNING, ...tuning }, totals });

  for (const [name, tuning] of Object.entries(TUNINGS)) {
    it(`matches a plain filter and sort for every query, page and vip filter (${name})`, async () => {
      // The first request of a search counts (total, runs, scope) and keeps the counts; the next
      // ones read them. Either way the counts plan the page (no page past the total, a rare term
      // straight to its matches, a first name's range seek).
      const search = searchWith(tuning);
      for (const q of QUERIES) {
        for (const vip of [undefined, true, false]) {
          const want = expected(rows, q, vip);
          for (const pass of ['counted', 'kept']) {
            for (const [limit, offset] of [
              [200, 0],
              [7, 3],
              [50, 100],
              [500, 0],
              [10, want.length],
            ] as const) {
              const page = await clientasPage(
                database.db,
                ctx(clinic),
                { q, vip: vip === undefined ? undefined : vip ? 'true' : 'false', limit, offset },
                NOW,
                search,
              );
              const label = `q=${JSON.stringify(q)} vip=${vip} limit=${limit} offset=${offset} (${pass} total)`;
              expect(page.total, label).toBe(want.length);
              expect(
                page.clientas.map((c) => c.id),
                label,
              ).toEqual(want.slice(offset, offset + limit));
            }
          }
        }
      }
    });
  }

  it('keeps where the matches lie in name order: before the term, starting with it, after it', async () => {
    // Thresholds under which even this small clinic's terms are "common", so the counts are made.
    const totals = new SearchTotals();
    const search = searchWith(TUNINGS['substring index']!, totals);
    const version = await clientasVersion(database.db, clinic.id);
    for (const q of ['maria', 'mar', 'ana', 'a', 'ñandú', 'lopez', '600']) {
      await clientasPage(database.db, ctx(clinic), { q }, NOW, search);
      const needle = normalizeName(q);
      const keys = expected(rows, q, undefined).map((id) => normalizeName(rows.find((r) => r.id === id)!.nombre));
      const kept = totals.get(
        { clinicId: clinic.id, nameLike: needle, digitsLike: looksLikePhone(q) ? phoneDigits(q) : null, vip: null },
        version,
      );
      const prefix = keys.filter((k) => k.startsWith(needle)).length;
      expect(kept, q).toEqual({
        total: keys.length,
        scope: rows.length,
        prefix,
        // Not counted when nothing starts with the term (no range to seek).
        before: prefix === 0 ? null : keys.filter((k) => Buffer.compare(Buffer.from(k), Buffer.from(needle)) < 0).length,
      });
    }
    // The demo's "maria" names all start with it; "lopez" is a surname only.
    expect(totals.get({ clinicId: clinic.id, nameLike: 'maria', digitsLike: null, vip: null }, version)?.before).toBe(0);
    expect(totals.get({ clinicId: clinic.id, nameLike: 'lopez', digitsLike: null, vip: null }, version)?.prefix).toBe(0);
  });

  it('the substring index follows renames, and unchanged re-imports keep it as it was', async () => {
    // One search for the whole test: each write bumps the clinic's version, so no kept count outlives it.
    const clientas = searchWith(TUNINGS['substring index']!);
    const target = SPECIAL[0]!;
    const search = async (q: string) => (await clientasPage(database.db, ctx(clinic), { q }, NOW, clientas)).clientas.map((c) => c.id);
    expect(await search('100%_r')).toEqual([target.id]);
    await seedRecords(database, clinic, [{ ...target, nombre: 'Anabel Quintanilla', telefono: '+34699000111' }]);
    expect(await search('100%_r')).toEqual([]);
    expect(await search('quintanil')).toEqual([target.id]);
    expect(await search('699 000')).toEqual([target.id]);
    expect(await search('633444555')).toEqual([]);
    await seedRecords(database, clinic, [{ ...target, nombre: 'Anabel Quintanilla', telefono: '+34699000111' }]);
    expect(await search('quintanil')).toEqual([target.id]);
    // back as it was, for the other tests
    await seedRecords(database, clinic, [target]);
    expect(await search('100%_r')).toEqual([target.id]);
  });
});
