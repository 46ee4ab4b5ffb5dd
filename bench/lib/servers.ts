// The servers under load (see Target in lib/cases.ts): the service, compiled and run as
// `clinic-api serve` in the settings each target needs, the bare route, and Platformatic DB.
import path from 'node:path';
import type { Range, Target } from './cases.js';
import type { Dataset } from './dataset.js';
import type { Options } from './options.js';
import { startPlatformatic } from './platformatic.js';
import { freePort, HOST, startServer, type ChildServer } from './processes.js';
import type { ServiceBuild } from './service.js';
import { startOtlpSink } from './otlp-sink.js';

/** The service's environment on the data set in `dataDir` (`port` 0: the data set's build, no HTTP). */
export function serviceEnv(dataDir: string, port: number): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const k of Object.keys(env))
    if (/^(DATABASE_URL|REDIS_URL|API_|TRUST_PROXY|NODE_OPTIONS|DB_|OAUTH_|PAGE_CACHE_|REQUEST_LOG_|OTEL_)/.test(k)) delete env[k];
  return {
    ...env,
    DATA_DIR: dataDir,
    HOST,
    PORT: String(port),
    LOG_LEVEL: 'warn',
    // The limiter still runs on every request; raised so that it never says no and the
    // benchmark measures the service, not the 60 requests/s policy.
    RATE_LIMIT_RPS: '100000',
    RATE_LIMIT_BURST: '1000000',
    // The cold page: every request runs the query, the count, the shaping and the serialization.
    PAGE_CACHE_MB: '0',
    REQUEST_LOG_DAYS: '30',
  };
}

/** The targets that run the service (the others: the bare route and Platformatic DB). */
type ServiceTarget = Exclude<Target, 'bare' | 'platformatic'>;

/** What differs from serviceEnv for each of the service's targets. */
const SETTINGS: Record<ServiceTarget, NodeJS.ProcessEnv> = {
  cold: {},
  nolog: { REQUEST_LOG_DAYS: '0' },
  // The page cache at its default size (config's PAGE_CACHE_MB), as `npm start` runs it.
  kept: { PAGE_CACHE_MB: undefined },
  mcp: {},
  // The endpoint is the harness's receiver, set when it starts (startServers).
  traced: {},
};

/** The servers `targets` need, on the data set; on an error the ones started are stopped. */
export async function startServers(
  opts: Options,
  root: string,
  ds: Dataset,
  build: ServiceBuild,
  range: Range,
  targets: ReadonlySet<Target>,
  log: (line: string) => void,
): Promise<Map<Target, ChildServer>> {
  const startTarget = async (target: Target, port: number): Promise<ChildServer> => {
    if (target === 'platformatic') return startPlatformatic(root, ds, port, log);
    if (target === 'bare')
      return startServer({
        name: 'bare route',
        port,
        readyPath: '/bare/citas',
        cwd: root,
        args: ['--import', 'tsx', path.join(root, 'bench/bare-route.ts')],
        env: {
          ...process.env,
          PORT: String(port),
          BARE_DB: path.join(ds.dataDir, 'clinic.db'),
          BARE_CLINIC: ds.big.id,
          BARE_START: String(range.start),
          BARE_END: String(range.end),
        },
      });
    return startServer({
      name: `service (${target})`,
      port,
      readyPath: '/livez',
      cwd: root,
      node: opts.node,
      args: [...opts.nodeArgs, build.bin, 'serve'],
      env: withSettings(serviceEnv(ds.dataDir, port), await settingsOf(target)),
    });
  };
  const servers = new Map<Target, ChildServer>();
  try {
    for (const target of targets) {
      const server = await startTarget(target, await freePort());
      servers.set(target, server);
      log(`${server.name} listening on ${server.baseUrl} (pid ${server.pid})`);
    }
    return servers;
  } catch (err) {
    await Promise.all([...servers.values()].map((s) => s.stop()));
    throw err;
  }
}

/** A target's settings; the traced one's receiver is started here and lives as long as the harness. */
async function settingsOf(target: ServiceTarget): Promise<NodeJS.ProcessEnv> {
  if (target !== 'traced') return SETTINGS[target];
  const sink = await startOtlpSink();
  // The SDK's other settings at their defaults, as a deployment runs them (a batch is sent when
  // 512 spans wait, so under load the sending is measured too).
  return { ...SETTINGS.traced, OTEL_EXPORTER_OTLP_ENDPOINT: sink.endpoint };
}

function withSettings(env: NodeJS.ProcessEnv, settings: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const out = { ...env, ...settings };
  for (const [k, v] of Object.entries(settings)) if (v === undefined) delete out[k];
  return out;
}
