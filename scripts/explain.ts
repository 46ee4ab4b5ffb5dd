// npm run explain -- [--db sqlite|postgres|both] [--scale N] [--analyze]
//
// Prints the plan of every statement the three endpoints send (tools/plan-shapes.ts), on a
// demo data set of the given scale (default 20: 4,000 clientas, 20,000 citas, 10,000 llamadas
// in the clinic under test, beside two small clinics), for docs/postgres.md.
// PostgreSQL: the server of DATABASE_URL when set (a database "clinic_api_explain" is dropped
// and re-created on it: its user needs CREATEDB), else a throw-away embedded server.
import { sql, type Kysely } from 'kysely';
import { loadConfig } from '../src/config.js';
import { openDatabase, type Database } from '../src/db/connect.js';
import { capturing, explain, selects } from '../src/db/explain.js';
import { migrateToLatest } from '../src/db/migrate.js';
import type { DB } from '../src/db/schema.js';
import { createDemoClinic } from '../src/services/demo.js';
import { commandLine } from '../tools/args.js';
import { PLAN_SHAPES, searchFor, seedFeedEvents } from '../tools/plan-shapes.js';
import { createDatabase } from '../tools/postgres-database.js';
import { startEmbeddedPostgres, type PgServer } from '../tools/postgres-server.js';

const cli = commandLine({
  name: 'explain',
  usage: `Usage: npm run explain -- [--db sqlite|postgres|both] [--scale N] [--analyze]

  --db        which database's plans to print (default both)
  --scale     demo scale of the clinic under test (default 20)
  --analyze   PostgreSQL: EXPLAIN ANALYZE (runs the statements)
`,
  options: {
    db: { type: 'string', default: 'both' },
    scale: { type: 'string', default: '20' },
    analyze: { type: 'boolean', default: false },
  },
});
const which = cli.choice('db', cli.values.db, ['sqlite', 'postgres', 'both'] as const);
const scale = cli.number('scale', cli.values.scale, 0.1, 10_000);
const analyze = cli.values.analyze;
const nowMs = Date.now();
const log = (s: string) => process.stderr.write(`${s}\n`);

async function seed(database: Database) {
  await migrateToLatest(database);
  await createDemoClinic(database, 1, { seed: 101, scale: Math.max(1, scale / 10), nowMs });
  const { clinic } = await createDemoClinic(database, 0, { seed: 1, scale, nowMs });
  await createDemoClinic(database, 2, { seed: 102, scale: Math.max(1, scale / 10), nowMs });
  const ctx = { clinicId: clinic.id, timezone: clinic.timezone, currency: clinic.currency };
  await seedFeedEvents(database, ctx, nowMs);
  if (database.dialect === 'postgres') await sql`analyze`.execute(database.db);
  return ctx;
}

async function printPlans(db: Kysely<DB>, title: string, ctx: { clinicId: string; timezone: string; currency: string }) {
  process.stdout.write(`\n# ${title}\n`);
  for (const shape of PLAN_SHAPES) {
    const cap = capturing(db);
    await shape.run(cap.db, ctx, nowMs, searchFor(shape));
    process.stdout.write(`\n## ${shape.name}\n`);
    for (const q of selects(cap.queries)) {
      process.stdout.write(`\n${q.sql.replace(/\s+/g, ' ')}\n  params: ${JSON.stringify(q.parameters)}\n`);
      for (const line of await explain(db, q, { analyze })) process.stdout.write(`    ${line}\n`);
    }
  }
}

async function main() {
  if (which === 'sqlite' || which === 'both') {
    const database = await openDatabase({ kind: 'sqlite', file: ':memory:' });
    try {
      log(`SQLite: generating scale ${scale}…`);
      await printPlans(database.db, `SQLite (demo scale ${scale})`, await seed(database));
    } finally {
      await database.close();
    }
  }
  if (which === 'postgres' || which === 'both') {
    const configured = loadConfig(process.env).databaseUrl;
    let server: PgServer | null = null;
    let admin = configured;
    if (admin === null) {
      log('PostgreSQL: starting an embedded server…');
      server = await startEmbeddedPostgres();
      admin = server.url;
    }
    try {
      const url = await createDatabase(admin, 'clinic_api_explain');
      const database = await openDatabase({ kind: 'postgres', url, poolMax: 2, statementTimeoutMs: 600_000 });
      try {
        log(`PostgreSQL: generating scale ${scale}…`);
        await printPlans(database.db, `PostgreSQL (demo scale ${scale})`, await seed(database));
      } finally {
        await database.close();
      }
    } finally {
      await server?.stop();
    }
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`explain: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exitCode = 1;
});
