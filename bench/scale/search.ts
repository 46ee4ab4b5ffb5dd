// Search latency by clinic size: npx tsx bench/scale/search.ts [--db sqlite,postgres] [--sizes 10000,100000,1000000] [--pg-url URL]
// One clinic of N clientas (the demo generator's names and phones) per database; for each query,
// the median of 7 runs of the whole use-case (page + total) and of the total alone.
import { sql } from 'kysely';
import type { Dialect } from '../../src/db/dialect.js';
import { generateDemo } from '../../src/demo/generate.js';
import { createClinic } from '../../src/services/accounts.js';
import { ClientasSearch } from '../../src/services/clientas-search/search.js';
import { clientasPage } from '../../src/services/listings.js';
import { looksLikePhone, normalizeName, phoneDigits } from '../../src/services/normalize.js';
import { writeClinicData } from '../../src/services/write/session.js';
import { commandLine } from '../../tools/args.js';
import { median, NOW_MS, pgAdmin, scratchDatabase } from './common.js';

const QUERIES: [string, Record<string, string>][] = [
  ['no q', {}],
  ['vip=true', { vip: 'true' }],
  ['q=mar (common)', { q: 'mar' }],
  ['q=maria (common, sorts late)', { q: 'maria' }],
  ['q=garcia lopez (rare)', { q: 'garcia lopez' }],
  ['q=isabel martinez sanchez (very rare)', { q: 'isabel martinez sanchez' }],
  ['q=600 12 (phone)', { q: '600 12' }],
  ['q=ez (2 chars)', { q: 'ez' }],
  ['q=zzz (no match)', { q: 'zzz' }],
  ['q=mar vip=true', { q: 'mar', vip: 'true' }],
  ['q=mar offset=5000', { q: 'mar', offset: '5000' }],
];

async function measure(dialect: Dialect, size: number, pgUrl: string | null) {
  const { database, where } = await scratchDatabase(dialect, pgUrl, `s${size}`);
  const clinic = await createClinic(database.db, { name: 'Grande', timezone: 'Europe/Madrid', currency: 'EUR', plan: 'premium' }, NOW_MS);
  const t0 = Date.now();
  const clientas = function* () {
    let n = 0;
    for (const record of generateDemo({
      seed: 1,
      scale: size / 200,
      today: '2026-03-28',
      timeZone: clinic.timezone,
      nowSeconds: NOW_MS / 1000,
    })) {
      if (record.type !== 'clienta' || n === size) break;
      yield { line: ++n, record };
    }
  };
  await writeClinicData(database, { clinicId: clinic.id, timezone: clinic.timezone, currency: clinic.currency }, clientas(), {
    mode: 'insert',
    now: () => NOW_MS,
  });
  if (dialect === 'postgres') await sql`vacuum analyze clientas`.execute(database.db);
  const loadS = (Date.now() - t0) / 1000;
  const ctx = { clinicId: clinic.id, timezone: clinic.timezone, currency: clinic.currency };
  const out: string[] = [];
  for (const [name, q] of QUERIES) {
    const query = { ...q, ...(q.offset ? { offset: Number(q.offset) } : {}) } as never;
    const page: number[] = [];
    const count: number[] = [];
    let total = 0;
    const search = q.q?.trim() ?? '';
    const filter = {
      nameLike: search ? normalizeName(search) : null,
      digitsLike: search && looksLikePhone(search) ? phoneDigits(search) : null,
      vip: q.vip === undefined ? null : q.vip === 'true',
    };
    for (let i = 0; i < 7; i++) {
      let t = performance.now();
      // A fresh search each time: the use-case as the first search of a term after a write.
      total = (await clientasPage(database.db, ctx, query, NOW_MS, new ClientasSearch())).total;
      page.push(performance.now() - t);
      t = performance.now();
      await new ClientasSearch().count(database.db, clinic.id, filter);
      count.push(performance.now() - t);
    }
    out.push(
      `| ${dialect} | ${size.toLocaleString('en-US')} | ${name} | ${total.toLocaleString('en-US')} | ${median(page).toFixed(1)} | ` +
        `${median(count).toFixed(1)} |`,
    );
  }
  process.stdout.write(`<!-- ${dialect} ${size}: loaded in ${loadS.toFixed(0)} s (${where}) -->\n${out.join('\n')}\n`);
  await database.close();
}

const cli = commandLine({
  name: 'scale/search',
  usage: `Usage: npx tsx bench/scale/search.ts [--db sqlite,postgres] [--sizes N,N...] [--pg-url URL]

  --db      databases, comma-separated (default sqlite,postgres)
  --sizes   clientas in the clinic, comma-separated (default 10000,100000,1000000)
  --pg-url  a PostgreSQL server whose user may CREATE DATABASE (default: an embedded one)
`,
  options: {
    db: { type: 'string', default: 'sqlite,postgres' },
    sizes: { type: 'string', default: '10000,100000,1000000' },
    'pg-url': { type: 'string' },
  },
});
const dbs = cli.values.db.split(',').map((d) => cli.choice('db', d.trim(), ['sqlite', 'postgres'] as const));
const sizes = cli.numbers('sizes', cli.values.sizes, 1, 100_000_000);
const pg = dbs.includes('postgres') ? await pgAdmin(cli.values['pg-url']) : null;
try {
  process.stdout.write('| db | clientas | query | total | page+total p50 ms | total alone p50 ms |\n|---|---|---|---|---|---|\n');
  for (const d of dbs) for (const s of sizes) await measure(d, s, pg?.url ?? null);
} finally {
  await pg?.server?.stop();
}
