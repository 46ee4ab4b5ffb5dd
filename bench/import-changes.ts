// The import's cost with the event log, against a build without it: `clinic-api import` of N
// records into an empty clinic (all created), then of the same N records each changed (all
// updated: N events with this branch), timed as real CLI processes of each build, on a fresh
// database per run; then the size of the event log those changes left (SQLite: dbstat,
// PostgreSQL: pg_total_relation_size). Besides wall clock, the CPU seconds of the import (the CLI
// process, and on PostgreSQL the server's processes too): steadier than wall clock on a machine
// that other programs share. Not part of `npm test`; see docs/benchmarks.md.
//
//   node --import tsx bench/import-changes.ts --ref main                   # this tree vs main, SQLite
//   node --import tsx bench/import-changes.ts --ref main --db postgres --records 100000 --runs 3
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import pg from 'pg';
import { generateDemo } from '../src/demo/generate.js';
import { commandLine } from '../tools/args.js';
import { createDatabase } from '../tools/postgres-database.js';
import { startEmbeddedPostgres, type PgServer } from '../tools/postgres-server.js';
import { log, ROOT } from './lib/options.js';
import { postgresPids, processTreeMs, reapedChildrenMs } from './lib/processes.js';
import { buildService, type ServiceBuild } from './lib/service.js';
import { median, NOW_MS, toJsonLine } from './scale/common.js';

const cli = commandLine({
  name: 'bench/import-changes',
  usage: `Usage: node --import tsx bench/import-changes.ts [options]

  --ref REV        the build to compare with (default main): exported and compiled like npm run bench --ref
  --db sqlite|postgres   (default sqlite; postgres starts a throw-away PostgreSQL)
  --records N      records per import (default 100000), in the demo's mix: about 12 % clientas, 59 % citas, 29 % llamadas
  --runs N         runs per build, alternating, median reported (default 3)
`,
  options: {
    ref: { type: 'string', default: 'main' },
    db: { type: 'string', default: 'sqlite' },
    records: { type: 'string', default: '100000' },
    runs: { type: 'string', default: '3' },
  },
});
const db = cli.choice('db', cli.values.db, ['sqlite', 'postgres'] as const);
const records = cli.number('records', cli.values.records, 1_000, 2_000_000);
const runs = cli.number('runs', cli.values.runs, 1, 20);
const PEPPER = 'bench-only-pepper-not-a-secret-0123456789abcdef';

/** The two files: the demo's records, and the same records each changed in a field of its own. */
function writeFiles(dir: string): { base: string; changes: string; lines: number } {
  const zone = 'Europe/Madrid';
  const base: string[] = [];
  const changes: string[] = [];
  const estados = ['pendiente', 'confirmada', 'completada', 'cancelada', 'no_asistio'];
  const resultados = ['agendada', 'cancelada', 'info', 'transferida', 'sin_accion'];
  for (const r of generateDemo({ seed: 1, scale: records / 1700, today: '2026-03-28', timeZone: zone, nowSeconds: NOW_MS / 1000 })) {
    base.push(toJsonLine(r, zone));
    if (r.type === 'clienta') changes.push(toJsonLine({ ...r, vip: !r.vip }, zone));
    else if (r.type === 'cita')
      changes.push(toJsonLine({ ...r, estado: estados[(estados.indexOf(r.estado) + 1) % 5]! as typeof r.estado }, zone));
    else changes.push(toJsonLine({ ...r, resultado: resultados[(resultados.indexOf(r.resultado) + 1) % 5]! as typeof r.resultado }, zone));
  }
  fs.writeFileSync(path.join(dir, 'base.jsonl'), `${base.join('\n')}\n`);
  fs.writeFileSync(path.join(dir, 'changes.jsonl'), `${changes.join('\n')}\n`);
  return { base: path.join(dir, 'base.jsonl'), changes: path.join(dir, 'changes.jsonl'), lines: base.length };
}

/** The PostgreSQL server's processes, whose CPU time counts as the import's (empty: SQLite). */
let dbPids: number[] = [];

function run(build: ServiceBuild, args: string[], env: NodeJS.ProcessEnv): { stdout: string; seconds: number; cpu: number } {
  const t0 = performance.now();
  const cli0 = reapedChildrenMs();
  const db0 = processTreeMs(dbPids);
  const r = spawnSync(process.execPath, [build.bin, ...args], { env, encoding: 'utf8', maxBuffer: 1 << 26 });
  const seconds = (performance.now() - t0) / 1000;
  const cpu = (reapedChildrenMs() - cli0 + processTreeMs(dbPids) - db0) / 1000;
  if (r.status !== 0) throw new Error(`clinic-api ${args.join(' ')} (${build.describe}) exited ${r.status}: ${r.stderr.slice(-2000)}`);
  return { stdout: r.stdout, seconds, cpu };
}

interface Measured {
  created: number;
  changed: number;
  /** CPU seconds of the same imports */
  createdCpu: number;
  changedCpu: number;
  events: number;
  eventBytes: number | null;
}

async function once(
  build: ServiceBuild,
  files: { base: string; changes: string },
  pgServer: PgServer | null,
  tag: string,
): Promise<Measured> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'clinic-import-bench-'));
  try {
    const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, DATA_DIR: dataDir, LOG_LEVEL: 'warn', API_KEY_PEPPER: PEPPER };
    if (pgServer) env.DATABASE_URL = await createDatabase(pgServer.url, `import_${tag}`);
    run(build, ['migrate'], env);
    const clinic = run(build, ['clinics', 'create', '--name', 'Bench', '--plan', 'premium'], env).stdout.trim();
    const created = run(build, ['import', '--clinic', clinic, files.base], env);
    const changed = run(build, ['import', '--clinic', clinic, files.changes], env);
    const size = await eventLog(env, clinic);
    return { created: created.seconds, changed: changed.seconds, createdCpu: created.cpu, changedCpu: changed.cpu, ...size };
  } finally {
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

/** Events and their bytes on disk (table and index), or 0 / null for a build without them. */
async function eventLog(env: NodeJS.ProcessEnv, clinic: string): Promise<{ events: number; eventBytes: number | null }> {
  if (env.DATABASE_URL) {
    const client = new pg.Client({ connectionString: env.DATABASE_URL });
    await client.connect();
    try {
      const exists = await client.query(`select to_regclass('events') is not null as e`);
      if (!exists.rows[0].e) return { events: 0, eventBytes: null };
      await client.query('vacuum analyze events');
      const r = await client.query(
        "select count(*)::int as n, pg_total_relation_size('events')::bigint as b from events where clinic_id = $1",
        [clinic],
      );
      return { events: Number(r.rows[0].n), eventBytes: Number(r.rows[0].b) };
    } finally {
      await client.end();
    }
  }
  const file = new BetterSqlite3(path.join(env.DATA_DIR!, 'clinic.db'), { readonly: true });
  try {
    const exists = file.prepare("select count(*) as n from sqlite_master where name = 'events'").get() as { n: number };
    if (exists.n === 0) return { events: 0, eventBytes: null };
    const n = (file.prepare('select count(*) as n from events where clinic_id = ?').get(clinic) as { n: number }).n;
    const bytes = (
      file.prepare("select sum(pgsize) as b from dbstat where name in ('events', 'sqlite_autoindex_events_1')").get() as { b: number }
    ).b;
    return { events: n, eventBytes: bytes };
  } finally {
    file.close();
  }
}

async function main() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'clinic-import-files-'));
  let pgServer: PgServer | null = null;
  try {
    const before = buildService(ROOT, { ref: cli.values.ref, prebuilt: null }, log);
    const after = buildService(ROOT, { ref: null, prebuilt: null }, log);
    const files = writeFiles(dir);
    log(`${files.lines} records per import, ${runs} run(s) per build, ${db}`);
    if (db === 'postgres') {
      pgServer = await startEmbeddedPostgres();
      dbPids = postgresPids(Number(new URL(pgServer.url).port));
    }
    const results = new Map<ServiceBuild, Measured[]>([
      [before, []],
      [after, []],
    ]);
    for (let i = 0; i < runs; i++) {
      for (const build of [before, after]) {
        const m = await once(build, files, pgServer, `${i}_${build === before ? 'b' : 'a'}`);
        log(
          `${build === before ? 'before' : 'after '} run ${i + 1}: created ${m.created.toFixed(1)} s (${m.createdCpu.toFixed(1)} s CPU), ` +
            `changed ${m.changed.toFixed(1)} s (${m.changedCpu.toFixed(1)} s CPU), ${m.events} events`,
        );
        results.get(build)!.push(m);
      }
    }
    const row = (label: string, build: ServiceBuild) => {
      const ms = results.get(build)!;
      return {
        label,
        describe: build.describe,
        created: median(ms.map((m) => m.created)),
        changed: median(ms.map((m) => m.changed)),
        createdCpu: median(ms.map((m) => m.createdCpu)),
        changedCpu: median(ms.map((m) => m.changedCpu)),
        last: ms.at(-1)!,
      };
    };
    const b = row('before', before);
    const a = row('after', after);
    const out = [
      `| build | import of ${files.lines.toLocaleString('en-US')} new records | import of the same records, each changed | events |`,
      '|---|---:|---:|---:|',
      ...[b, a].map(
        (x) =>
          `| ${x.label}: ${x.describe} | ${x.created.toFixed(1)} s (${x.createdCpu.toFixed(1)} s CPU) | ` +
          `${x.changed.toFixed(1)} s (${x.changedCpu.toFixed(1)} s CPU) | ${x.last.events.toLocaleString('en-US')} |`,
      ),
      '',
      `Changed records: after / before = ${(a.changed / b.changed).toFixed(2)}× (target: at most 1.5×), CPU ` +
        `${(a.changedCpu / b.changedCpu).toFixed(2)}×; new records: ${(a.created / b.created).toFixed(2)}×, CPU ` +
        `${(a.createdCpu / b.createdCpu).toFixed(2)}×.`,
      `CPU: the import's process${db === 'postgres' ? ' and the PostgreSQL server' : ''}, median of the runs.`,
    ];
    if (a.last.eventBytes !== null && a.last.events > 0) {
      out.push(
        `Event log on disk after both imports (${db}, table and primary key): ${(a.last.eventBytes / 2 ** 20).toFixed(1)} MiB for ` +
          `${a.last.events.toLocaleString('en-US')} events (the creations and the changes), ` +
          `${Math.round(a.last.eventBytes / a.last.events)} bytes per event.`,
      );
    }
    process.stdout.write(`${out.join('\n')}\n`);
  } finally {
    await pgServer?.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`bench/import-changes: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exitCode = 1;
});
