// The two servers under load: the service (compiled, run as `clinic-api serve`) and the bare
// route (plain Fastify + better-sqlite3 running the same appointment query, SQLite only).
import fs from 'node:fs';
import path from 'node:path';
import type { Dataset } from './dataset.js';
import type { Options } from './options.js';
import { freePort, HOST, startServer, type ChildServer } from './processes.js';
import type { ServiceBuild } from './service.js';

/**
 * The pepper of a --db postgres run: with DATABASE_URL the service requires one, and the data-set
 * builder and the server must share it, else the benchmark key would not verify. Benchmark data only.
 */
const BENCH_PEPPER = 'bench-only-pepper-not-a-secret-0123456789abcdef';

/** `databaseUrl`: null for SQLite in DATA_DIR, else the PostgreSQL database of this scale. */
export function serviceEnv(dataDir: string, port: number, databaseUrl: string | null): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const k of [
    'DATABASE_URL',
    'REDIS_URL',
    'API_KEY_PEPPER',
    'API_KEY_PREFIX',
    'API_PLANS',
    'TRUST_PROXY',
    'NODE_OPTIONS',
    'DB_POOL_MAX',
    'DB_STATEMENT_TIMEOUT_MS',
    'OAUTH_ISSUER',
  ])
    delete env[k];
  return {
    ...env,
    ...(databaseUrl !== null ? { DATABASE_URL: databaseUrl, API_KEY_PEPPER: BENCH_PEPPER } : {}),
    DATA_DIR: dataDir,
    HOST,
    PORT: String(port),
    LOG_LEVEL: 'warn',
    // The limiter still runs on every request; it is raised so that it never says no and the
    // benchmark measures the service, not the 60 requests/s policy.
    RATE_LIMIT_RPS: '100000',
    RATE_LIMIT_BURST: '1000000',
    // The cases ask for the same URLs again and again: with the page cache they would measure its
    // hits, not the queries and the serialization they are there for. A case that measures the
    // cache turns it on in its own environment (lib/limits.ts).
    PAGE_CACHE_MB: '0',
    // The request log on (its default), whatever the caller's environment: citas-nolog compares.
    REQUEST_LOG_DAYS: '30',
    // OAuth on, so that a case can compare an access token with the key (me-token); a server
    // that is not listening (the data set's build, port 0) has no issuer.
    ...(port > 0 ? { OAUTH_ISSUER: `http://${HOST}:${port}` } : {}),
  };
}

export interface Servers {
  bare: ChildServer | null;
  service: ChildServer | null;
  /** the service with REQUEST_LOG_DAYS=0, when a case needs it */
  serviceNoLog: ChildServer | null;
  all: ChildServer[];
}

/** The servers `opts.cases` need, on the data set of `dataDir`; stopped by the caller (all). */
export async function startServers(
  opts: Options,
  root: string,
  scale: number,
  dataDir: string,
  databaseUrl: string | null,
  ds: Dataset,
  build: ServiceBuild,
  range: { start: number; end: number },
  log: (line: string) => void,
): Promise<Servers> {
  const servers: Servers = { bare: null, service: null, serviceNoLog: null, all: [] };
  try {
    if (opts.cases.some((c) => c.target === 'bare')) {
      const port = await freePort();
      servers.bare = await startServer({
        name: 'bare route',
        port,
        readyPath: '/bare/citas',
        cwd: root,
        args: ['--import', 'tsx', path.join(root, 'bench/bare-route.ts')],
        env: {
          ...process.env,
          PORT: String(port),
          BARE_DB: path.join(dataDir, 'clinic.db'),
          BARE_CLINIC: ds.big.id,
          BARE_START: String(range.start),
          BARE_END: String(range.end),
        },
      });
      servers.all.push(servers.bare);
      log(`bare route listening on ${servers.bare.baseUrl} (pid ${servers.bare.pid})`);
    }
    // The rate-limit comparison measures the service as well (its in-memory figures), the MCP
    // comparison's time rounds run on it, the SDK walks it, and the backup case serves from it.
    if (opts.cases.some((c) => c.target === 'service') || opts.limits || opts.mcp || opts.sdkPaging || opts.backup) {
      const port = await freePort();
      const prof = opts.cpuProf
        ? ['--cpu-prof', `--cpu-prof-dir=${opts.cpuProf}`, `--cpu-prof-name=service-${opts.db}-scale-${scale}-${Date.now()}.cpuprofile`]
        : [];
      if (opts.cpuProf) fs.mkdirSync(opts.cpuProf, { recursive: true });
      servers.service = await startServer({
        name: 'service',
        port,
        readyPath: '/api/v1/openapi.json',
        cwd: root,
        args: [...opts.nodeArgs, ...prof, build.bin, 'serve'],
        env: serviceEnv(dataDir, port, databaseUrl),
      });
      servers.all.push(servers.service);
      log(`service listening on ${servers.service.baseUrl} (pid ${servers.service.pid})`);
    }
    if (opts.cases.some((c) => c.target === 'service-nolog')) {
      const port = await freePort();
      servers.serviceNoLog = await startServer({
        name: 'service without request log',
        port,
        readyPath: '/api/v1/openapi.json',
        cwd: root,
        args: [...opts.nodeArgs, build.bin, 'serve'],
        env: { ...serviceEnv(dataDir, port, databaseUrl), REQUEST_LOG_DAYS: '0' },
      });
      servers.all.push(servers.serviceNoLog);
      log(`service with REQUEST_LOG_DAYS=0 listening on ${servers.serviceNoLog.baseUrl} (pid ${servers.serviceNoLog.pid})`);
    }
    return servers;
  } catch (err) {
    await Promise.all(servers.all.map((s) => s.stop()));
    throw err;
  }
}
