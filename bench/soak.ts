// `npm run soak`: two minutes of steady load on PostgreSQL with the database restarted twice in
// the middle (a fast shutdown, then a crash), printing the answers per status, latencies, how
// long service took to resume after each restart, and the service's memory at the start and the
// end. Not part of `npm test`. Its figures are in docs/operations.md.
//
//   npm run soak                                   # 120 s at 100 requests/s
//   npm run soak -- --duration 300 --rate 200
import http from 'node:http';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { commandLine } from '../tools/args.js';
import { createDatabase } from '../tools/postgres-database.js';
import { startEmbeddedPostgres } from '../tools/postgres-server.js';
import { percentile } from './lib/open-loop.js';
import { log, ROOT } from './lib/options.js';
import { freePort, HOST, installHooks, readMemory, rssSampler, startServer } from './lib/processes.js';
import { buildService } from './lib/service.js';
import { withFirstRunFile } from '../test/helpers/first-run-file.js';

const USAGE = `Usage: npm run soak -- [options]

  --duration S   seconds of load (default 120); the database restarts at 1/3 and 2/3 of it
  --rate N       requests per second, open loop (default 100)
  --down S       seconds the database stays down at the second (crash) restart (default 3)
  --ref REV      soak a git revision (e.g. main) instead of the working tree
  -h, --help
`;

const cli = commandLine({
  name: 'soak',
  usage: USAGE,
  options: {
    duration: { type: 'string', default: '120' },
    rate: { type: 'string', default: '100' },
    down: { type: 'string', default: '3' },
    ref: { type: 'string' },
  },
});
const opts = {
  duration: cli.number('duration', cli.values.duration, 10, 86_400),
  rate: cli.number('rate', cli.values.rate, 1, 10_000),
  down: cli.number('down', cli.values.down, 0, 600),
  ref: cli.values.ref ?? null,
};

const PEPPER = 'soak-only-pepper-not-a-secret-0123456789abcdef';
const PATHS = ['/api/v1/citas?limit=20', '/api/v1/clientas?limit=20&q=mar', '/api/v1/llamadas?limit=20', '/api/v1/clientas?limit=50'];
const MiB = 2 ** 20;

interface Outcome {
  at: number;
  status: number;
  code: string | null;
  ms: number;
}

function request(agent: http.Agent, url: string, key: string, dueAt: number): Promise<Outcome> {
  return new Promise((resolve) => {
    const req = http.get(url, { agent, headers: { authorization: `Bearer ${key}` }, timeout: 30_000 }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => {
        body += c;
      });
      res.on('end', () => {
        let code: string | null = null;
        if ((res.statusCode ?? 0) >= 400) {
          try {
            code = (JSON.parse(body) as { error?: { code?: string } }).error?.code ?? null;
          } catch {
            code = 'not json';
          }
        }
        resolve({ at: dueAt, status: res.statusCode ?? 0, code, ms: performance.now() - dueAt });
      });
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', (err) =>
      resolve({ at: dueAt, status: 0, code: (err as NodeJS.ErrnoException).code ?? err.message, ms: performance.now() - dueAt }),
    );
  });
}

async function main(): Promise<void> {
  installHooks();
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'clinic-api-soak-'));
  process.on('exit', () => fs.rmSync(tmp, { recursive: true, force: true }));
  const build = buildService(ROOT, { ref: opts.ref, prebuilt: null }, log);
  log(`soaking ${build.describe}`);
  log('starting a throw-away PostgreSQL ...');
  const pg = await startEmbeddedPostgres();
  try {
    const url = await createDatabase(pg.url, 'soak');
    const port = await freePort();
    const server = await startServer({
      name: 'service',
      port,
      readyPath: '/livez',
      cwd: ROOT,
      args: [build.bin, 'serve'],
      env: {
        PATH: process.env.PATH,
        DATA_DIR: tmp,
        HOST,
        PORT: String(port),
        LOG_LEVEL: 'warn',
        DATABASE_URL: url,
        API_KEY_PEPPER: PEPPER,
        RATE_LIMIT_RPS: '100000',
        RATE_LIMIT_BURST: '1000000',
      },
    });
    try {
      let key: string | undefined;
      for (let i = 0; i < 100 && !key; i++) {
        key = /Bearer ([a-z][a-z0-9]*_[A-Za-z0-9_-]{43})/.exec(withFirstRunFile(server.output()))?.[1];
        if (!key) await new Promise((r) => setTimeout(r, 100));
      }
      if (!key) throw new Error(`no demo key in the service's output:\n${server.output()}`);

      const agent = new http.Agent({ keepAlive: true, maxSockets: 256 });
      const rssStart = readMemory(server.pid)?.rss ?? NaN;
      const sampler = rssSampler(server.pid, 500);
      // Resident memory every tenth of the run: a leak climbs, a warm-up levels off.
      const rssTimeline: number[] = [];
      const rssTimer = setInterval(() => rssTimeline.push(readMemory(server.pid)?.rss ?? NaN), (opts.duration * 1000) / 10);
      const outcomes: Promise<Outcome>[] = [];
      const restarts: { label: string; downAt: number; upAt: number }[] = [];
      const t0 = performance.now();
      const total = Math.round(opts.rate * opts.duration);
      const interval = 1000 / opts.rate;

      // The restarts, in the middle, while the load runs.
      const faults = (async () => {
        const at = async (s: number) => {
          while (performance.now() - t0 < s * 1000) await new Promise((r) => setTimeout(r, 50));
        };
        await at(opts.duration / 3);
        log('restarting PostgreSQL (fast shutdown, 1 s down) ...');
        let downAt = performance.now();
        await pg.shutdown('fast');
        await new Promise((r) => setTimeout(r, 1_000));
        await pg.start();
        restarts.push({ label: 'fast shutdown, 1 s down', downAt, upAt: performance.now() });
        await at((2 * opts.duration) / 3);
        log(`restarting PostgreSQL (a crash: immediate shutdown, ${opts.down} s down) ...`);
        downAt = performance.now();
        await pg.shutdown('immediate');
        await new Promise((r) => setTimeout(r, opts.down * 1_000));
        await pg.start();
        restarts.push({ label: `crash (immediate shutdown), ${opts.down} s down`, downAt, upAt: performance.now() });
      })();

      log(`${opts.duration} s at ${opts.rate} requests/s ...`);
      for (let i = 0; i < total; i++) {
        const due = t0 + i * interval;
        const wait = due - performance.now();
        if (wait > 1) await new Promise((r) => setTimeout(r, wait));
        outcomes.push(request(agent, `${server.baseUrl}${PATHS[i % PATHS.length]}`, key, due));
      }
      await faults;
      const all = await Promise.all(outcomes);
      clearInterval(rssTimer);
      const peak = sampler.stop();
      const rssEnd = readMemory(server.pid)?.rss ?? NaN;
      agent.destroy();

      const byStatus = new Map<string, number>();
      for (const o of all) {
        const k = o.status === 0 ? `no answer (${o.code})` : `${o.status}${o.code ? ` ${o.code}` : ''}`;
        byStatus.set(k, (byStatus.get(k) ?? 0) + 1);
      }
      const lat = (xs: Outcome[]) => xs.map((o) => o.ms).sort((a, b) => a - b);
      const ok = lat(all.filter((o) => o.status === 200));
      const errs = lat(all.filter((o) => o.status !== 200));
      const outside = lat(all.filter((o) => o.status === 200 && !restarts.some((r) => o.at >= r.downAt - 1_000 && o.at <= r.upAt + 5_000)));
      const ms = (n: number) => (Number.isFinite(n) ? n.toFixed(1) : 'n/a');
      const out: string[] = [];
      out.push(`| status | count |`, '|---|---:|', ...[...byStatus].sort().map(([k, n]) => `| ${k} | ${n} |`));
      out.push('');
      out.push(`| latency (ms) | p50 | p99 | max |`, '|---|---:|---:|---:|');
      out.push(`| 200, all | ${ms(percentile(ok, 50))} | ${ms(percentile(ok, 99))} | ${ms(ok[ok.length - 1] ?? NaN)} |`);
      out.push(
        `| 200, away from the restarts | ${ms(percentile(outside, 50))} | ${ms(percentile(outside, 99))} | ` +
          `${ms(outside[outside.length - 1] ?? NaN)} |`,
      );
      out.push(`| errors | ${ms(percentile(errs, 50))} | ${ms(percentile(errs, 99))} | ${ms(errs[errs.length - 1] ?? NaN)} |`);
      out.push('');
      out.push('| restart | database down for (s) | first 200 after it was back (s) |', '|---|---:|---:|');
      for (const r of restarts) {
        const first = all
          .filter((o) => o.status === 200 && o.at + o.ms >= r.upAt)
          .map((o) => o.at + o.ms)
          .sort((a, b) => a - b)[0];
        out.push(
          `| ${r.label} | ${((r.upAt - r.downAt) / 1000).toFixed(1)} | ` +
            `${first === undefined ? 'never' : ((first - r.upAt) / 1000).toFixed(2)} |`,
        );
      }
      out.push('');
      out.push(`Service RSS every ${opts.duration / 10} s (MiB): ${rssTimeline.map((r) => (r / MiB).toFixed(0)).join(', ')}.`);
      out.push('');
      out.push(
        `Service RSS: ${(rssStart / MiB).toFixed(0)} MiB at the start, ${(rssEnd / MiB).toFixed(0)} MiB at the end (peak ` +
          `${(peak / MiB).toFixed(0)} MiB). ${all.length} requests in ${opts.duration} s at ${opts.rate}/s over ${PATHS.length} paths; ` +
          `the process ${server.memory() ? 'was still running' : 'had died'} at the end. ${build.describe}. ${os.cpus().length} cores, ` +
          `Node ${process.version}, PostgreSQL 17 (embedded), DB_POOL_MAX 10.`,
      );
      process.stdout.write(`\n${out.join('\n')}\n`);
      const unexpected = all.filter((o) => o.status !== 200 && !(o.status === 500 && o.code === 'database_error'));
      process.exitCode = unexpected.length === 0 && server.memory() !== null ? 0 : 1;
      if (unexpected.length) process.stdout.write(`\n${unexpected.length} answers were neither 200 nor 500 database_error\n`);
    } finally {
      await server.stop();
    }
  } finally {
    await pg.stop();
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`soak: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exitCode = 1;
});
