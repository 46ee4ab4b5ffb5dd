// `npm run bench:webhooks`: how fast one server process delivers webhooks to a local receiver,
// and the lag from an import's commit to the delivery (docs/benchmarks.md, "Webhooks"). Not part
// of `npm test`.
//
// The service runs compiled (`clinic-api serve`, as `npm start` runs it) on a fresh SQLite file or
// PostgreSQL (--db postgres: a throw-away embedded server). This process is the receiver (an HTTP
// server on 127.0.0.1 answering 204 at once) and the writer (imports through the same code as
// `clinic-api import`, so PostgreSQL's NOTIFY at commit wakes the worker). Two phases, on one
// endpoint of one clinic (per-endpoint order makes an endpoint's deliveries sequential):
//   1. throughput: one import of --burst events, then the time until the last one arrives;
//   2. lag: imports of --rate/20 events every 50 ms for --duration seconds (--rate events/s);
//      per event, from the moment its import's commit returned to its arrival at the receiver.
//
//   npm run bench:webhooks                          # SQLite, 5,000-event burst, 200 events/s for 10 s
//   npm run bench:webhooks -- --db postgres --rate 400 --duration 20
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { loadConfig } from '../src/config.js';
import { openRuntime } from '../src/runtime.js';
import { createClinic } from '../src/services/accounts.js';
import { importJsonLines } from '../src/services/import.js';
import { commandLine } from '../tools/args.js';
import { createDatabase } from '../tools/postgres-database.js';
import { startEmbeddedPostgres } from '../tools/postgres-server.js';
import { percentile } from './lib/open-loop.js';
import { log, ROOT } from './lib/options.js';
import { freePort, HOST, installHooks, startServer } from './lib/processes.js';
import { buildService } from './lib/service.js';

const USAGE = `Usage: npm run bench:webhooks -- [options]

  --db sqlite|postgres   the database (default sqlite)
  --burst N              events of the throughput phase, in one import (default 5000)
  --rate N               events per second of the lag phase (default 200)
  --duration S           seconds of the lag phase (default 10)
  -h, --help
`;

const PEPPER = 'bench-webhooks-pepper-0123456789abcdefghijklmnop';
const TARGET_P99_MS = 1_000;

const cli = commandLine({
  name: 'bench:webhooks',
  usage: USAGE,
  options: {
    db: { type: 'string', default: 'sqlite' },
    burst: { type: 'string', default: '5000' },
    rate: { type: 'string', default: '200' },
    duration: { type: 'string', default: '10' },
  },
});
const db = cli.choice('db', cli.values.db, ['sqlite', 'postgres'] as const);
const burst = cli.number('burst', cli.values.burst, 2, 1_000_000);
const rate = cli.number('rate', cli.values.rate, 20, 100_000);
const duration = cli.number('duration', cli.values.duration, 1, 3_600);

installHooks();
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'clinic-bench-webhooks-'));
const pg = db === 'postgres' ? await startEmbeddedPostgres() : null;
try {
  const env: Record<string, string> = {
    DATA_DIR: dir,
    API_KEY_PEPPER: PEPPER,
    LOG_LEVEL: 'warn',
    WEBHOOK_ALLOW_PRIVATE: 'true',
    PATH: process.env.PATH ?? '',
  };
  if (pg) env.DATABASE_URL = await createDatabase(pg.url, 'bench_webhooks');

  // The receiver: arrival time per event id.
  const arrived = new Map<string, number>();
  let requests = 0;
  const receiver = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const at = performance.now();
      requests++;
      const id = String(req.headers['webhook-id']);
      if (!arrived.has(id)) arrived.set(id, at);
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((r) => receiver.listen(0, HOST, () => r()));
  const hookUrl = `http://${HOST}:${(receiver.address() as { port: number }).port}/hook`;

  const rt = await openRuntime(loadConfig(env), { logTo: false });
  const clinic = await createClinic(rt.database.db, { name: 'Bench Webhooks', plan: 'premium', timezone: 'Europe/Madrid' }, Date.now());
  await rt.webhooks.create({ clinicId: clinic.id, url: hookUrl, eventTypes: null, createdBy: null });

  const build = buildService(ROOT, { ref: null, prebuilt: null }, log);
  const port = await freePort();
  const server = await startServer({
    name: 'clinic-api',
    args: [build.bin, 'serve'],
    env: { ...env, PORT: String(port), HOST },
    port,
    readyPath: '/livez',
    cwd: ROOT,
  });

  let n = 0;
  /** Imports `k` events (clientas and citas, half each; one more clienta if odd); their ids and when the commit returned. */
  async function importEvents(k: number): Promise<{ ids: string[]; committed: number }> {
    const lines: string[] = [];
    for (let i = 0; i < k; i += 2) {
      const c = `b0000001-0000-4000-8000-${String(++n).padStart(12, '0')}`;
      lines.push(
        JSON.stringify({
          type: 'clienta',
          id: c,
          nombre: `Bench ${n}`,
          telefono: `+3460${String(n).padStart(7, '0')}`,
          vip: false,
          cliente_desde: '2024-01-01',
          created_at: '2024-01-01T10:00:00+01:00',
        }),
      );
      if (i + 1 < k) {
        lines.push(
          JSON.stringify({
            type: 'cita',
            id: `b0000002-0000-4000-8000-${String(n).padStart(12, '0')}`,
            clienta_id: c,
            fecha_hora: '2026-04-01T10:00:00+02:00',
            servicio: 'Manicura',
            duracion_min: 45,
            precio: 20,
            estado: 'confirmada',
            profesional_nombre: 'Laura',
            sede_nombre: 'Centro',
            created_at: '2026-03-01T09:00:00+01:00',
          }),
        );
      }
    }
    const before = await rt.database.db
      .selectFrom('clinic_data_versions')
      .select('events_seq')
      .where('clinic_id', '=', clinic.id)
      .executeTakeFirst();
    const res = await importJsonLines(rt.database, clinic.id, Readable.from([`${lines.join('\n')}\n`]));
    const committed = performance.now();
    if (!res.ok) throw new Error('bench import refused');
    const ids = (
      await rt.database.db
        .selectFrom('events')
        .select('id')
        .where('clinic_id', '=', clinic.id)
        .where('seq', '>', Number(before?.events_seq ?? 0))
        .orderBy('seq')
        .execute()
    ).map((r) => r.id);
    return { ids, committed };
  }

  async function allArrived(ids: string[], limitMs: number): Promise<number> {
    const end = Date.now() + limitMs;
    while (!ids.every((id) => arrived.has(id))) {
      if (Date.now() > end)
        throw new Error(`only ${ids.filter((id) => arrived.has(id)).length} of ${ids.length} events arrived within ${limitMs} ms`);
      await new Promise((r) => setTimeout(r, 20));
    }
    return Math.max(...ids.map((id) => arrived.get(id)!));
  }

  // Warm-up: a few events, so that connections and JIT are warm.
  const warm = await importEvents(20);
  await allArrived(warm.ids, 30_000);

  log(`throughput: one import of ${burst} events`);
  const b = await importEvents(burst);
  const last = await allArrived(b.ids, 600_000);
  const perSecond = b.ids.length / ((last - b.committed) / 1000);

  log(`lag: ${rate} events/s for ${duration} s`);
  const perTick = Math.round(rate / 20);
  const lags: number[] = [];
  const batches: { ids: string[]; committed: number }[] = [];
  const start = performance.now();
  for (let tick = 0; tick < duration * 20; tick++) {
    const due = start + tick * 50;
    const wait = due - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    batches.push(await importEvents(perTick));
  }
  const offered = batches.reduce((s, x) => s + x.ids.length, 0) / ((performance.now() - start) / 1000);
  for (const batch of batches) {
    await allArrived(batch.ids, 120_000);
    for (const id of batch.ids) lags.push(arrived.get(id)! - batch.committed);
  }
  lags.sort((x, y) => x - y);
  const p50 = percentile(lags, 50);
  const p99 = percentile(lags, 99);

  await server.stop();
  await rt.close();
  await new Promise<void>((r) => receiver.close(() => r()));

  const out = [
    `webhooks (${db}, one server process, one endpoint, receiver on 127.0.0.1; ${os.cpus().length} CPUs, shared machine)`,
    `  throughput: ${b.ids.length} events of one import delivered in ${((last - b.committed) / 1000).toFixed(2)} s = ` +
      `${perSecond.toFixed(0)} events/s`,
    `  lag at ${offered.toFixed(0)} events/s for ${duration} s (${lags.length} events): p50 ${p50.toFixed(0)} ms, p99 ` +
      `${p99.toFixed(0)} ms, max ${lags[lags.length - 1]!.toFixed(0)} ms (goal: p99 < ${TARGET_P99_MS} ms: ` +
      `${p99 < TARGET_P99_MS ? 'met' : 'NOT met'})`,
    `  requests received: ${requests} for ${arrived.size} distinct events`,
  ];
  process.stdout.write(`${out.join('\n')}\n`);
} finally {
  await pg?.stop();
  fs.rmSync(dir, { recursive: true, force: true });
}
