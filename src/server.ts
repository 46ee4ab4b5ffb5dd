// The server: runtime (runtime.ts: config -> database -> services) -> app (app.ts) -> listen -> first run ->
// where to go, on stdout; a graceful shutdown on SIGTERM/SIGINT (close-with-grace): the drain
// (http/plugins/drain.ts: /readyz 503, Connection: close, the listener closed, every request
// already sent answered, idle connections closed), then the usage counts written and the
// database closed, exit 0, all within SHUTDOWN_TIMEOUT_S or exit 1. Only the CLI's `serve` command starts it (cli/server.ts).
import v8 from 'node:v8';
import closeWithGrace from 'close-with-grace';
import type { FastifyInstance } from 'fastify';
import type { Config } from './config.js';

import { buildApp } from './app.js';
import { describeRedisUrl } from './redis/url.js';
import { openRuntime } from './runtime.js';
import { firstRun, type FirstRunResult } from './services/first-run.js';
import { listenForKeyChanges } from './services/key-changes.js';
import { explainListenError } from './startup-errors.js';

/**
 * How long a start waits for Redis before it serves anyway: long enough for a healthy Redis, so
 * that limits are shared from the first request, short enough that an outage does not hold up
 * a restart (the limits fail open meanwhile, and the link keeps trying).
 */
const REDIS_START_WAIT_MS = 1_000;

/**
 * V8's mid-tier compiler (Maglev) destroys its finished compile jobs on the main thread, not on a
 * background thread. On Node 24 the background destruction let the jobs' work memory pile up
 * (V8's peak of memory outside its heap: about 25 MiB after 1,000 pages, 6 MiB with this), and
 * glibc's allocator keeps such memory once freed: 15-20 MiB more resident for the process's life,
 * more the more distinct code is hot (the MCP path's). Freeing a job's memory where it is made
 * costs the main thread nothing measurable (docs/benchmarks.md, "MCP"). Maglev itself stays on:
 * without it the same memory is saved, but the MCP path ran about 5% slower. A flag this Node's
 * V8 does not know would only print an error: test/server/v8-flags.test.ts checks that it does.
 */
export const SERVER_V8_FLAGS = '--no-maglev-destroy-on-background';

export interface ServeOptions {
  /** Exports the spans still waiting and stops tracing (telemetry/start.ts), after everything else at shutdown. */
  stopTracing?: () => Promise<void>;
}

export async function serve(
  config: Config,
  out: NodeJS.WritableStream = process.stdout,
  options: ServeOptions = {},
): Promise<() => Promise<void>> {
  v8.setFlagsFromString(SERVER_V8_FLAGS);
  let app: FastifyInstance | undefined;
  // The server's SQLite connection never waits for the write lock inside a statement (services/write-lock.ts).
  const rt = await openRuntime(config, { server: true });
  const redisName = config.redisUrl === null ? null : describeRedisUrl(config.redisUrl);
  let first: FirstRunResult | null;
  try {
    app = await buildApp(rt);
    const log = rt.log;
    const redis = await rt.redis();
    if (redis) {
      listenForKeyChanges(
        redis,
        rt.keys,
        (id, kind) =>
          kind === 'key'
            ? log.info({ key: id }, 'API key changed elsewhere (revoked, edited or rolled): its next request reads it again')
            : log.info({ grant: id }, 'app disconnected elsewhere: its tokens are refused here from now on'),
        rt.appTokens,
      );
      await redis.waitUp(REDIS_START_WAIT_MS);
    }
    if (rt.pepperGenerated)
      log.warn('API_KEY_PEPPER is not set: generated one into DATA_DIR/api-key-pepper; back it up (losing it voids every key)');
    // API usage for the dashboard is counted in memory and written in one batch every
    // USAGE_FLUSH_INTERVAL_S; the app's onClose hook writes the rest, before the database closes below.
    app.usage.start(config.usageFlushIntervalS * 1000);
    // Events past EVENT_RETENTION_DAYS leave the change feed's log, in the background.
    app.retention.start();
    // The request log: written at least once a second; the rest on close (the app's onClose).
    rt.requestLog?.start();
    rt.requestLogRetention.start();
    // Webhook deliveries from the event log, in the background (stopped, its leases given up, on close).
    await app.webhookWorker.start();
    // Listen before the first run: if the port is taken, the start fails before the demo is made,
    // so the next start still makes it and prints its key and password (made after a failed
    // listen, they would be shown to no one).
    try {
      await app.listen({ port: config.port, host: config.host });
    } catch (err) {
      throw explainListenError(err, config);
    }
    first = await firstRun(rt.database, rt.keys, Date.now());
  } catch (err) {
    // Nothing may keep the process alive after a failed start (e.g. an idle PostgreSQL pool).
    await app?.close().catch(() => {});
    await rt.close().catch(() => {});
    throw err;
  }
  const running = app;
  const logger = running.log;
  let closing: Promise<void> | null = null;
  const shutdown = () => {
    closing ??= (async () => {
      // Connections the kernel accepted before the signal may wait in the listener's queue (Node
      // takes them one per turn of the event loop): the listener stays open until none is left,
      // for at most half the shutdown's time, which leaves the other half to answer them.
      running.lifecycle.beginDrain(running.server, { closeListenerWithinMs: (config.shutdownTimeoutS * 1000) / 2 });
      // The webhook worker stops claiming at once and gives its leases up while the requests
      // drain (the app's onClose waits for the same stop).
      const workerStopped = running.webhookWorker.stop();
      // Every request already sent answered, every connection closed: only then the app (its
      // onClose writes the usage counts) and the database, which the last response may need.
      await running.lifecycle.drained();
      await Promise.all([workerStopped, running.close()]);
      await rt.close();
      await options.stopTracing?.();
    })();
    return closing;
  };

  // A promise nobody handled comes from work off the request's path (every background task
  // handles its own errors: services/background.ts); it is logged, and the process carries on.
  const onUnhandledRejection = (reason: unknown) => {
    rt.metrics.backgroundFailures.inc({ task: 'unhandled rejection' });
    logger.error(
      { err: reason },
      'unhandled promise rejection (a bug: a background task without its own error handling); the process carries on',
    );
  };
  process.on('unhandledRejection', onUnhandledRejection);

  // SIGTERM, SIGINT (and the other termination signals): a graceful shutdown, exit 0, or exit 1
  // past SHUTDOWN_TIMEOUT_S. An uncaught exception leaves the process in an unknown state: it is
  // logged and the process shuts down the same way, with exit code 1.
  const grace = closeWithGrace(
    {
      delay: config.shutdownTimeoutS * 1000,
      skip: ['unhandledRejection'],
      logger: { error: (m: unknown) => logger.error(typeof m === 'string' ? m : { err: m }, 'shutdown') },
      onTimeout: (ms: number) =>
        logger.error(
          { timeoutMs: ms, openConnections: running.lifecycle.openConnections },
          'shutdown took longer than SHUTDOWN_TIMEOUT_S; exiting with code 1',
        ),
    },
    async ({ signal, err }) => {
      if (err) logger.fatal({ err }, 'uncaught exception; shutting down');
      else logger.info({ signal }, 'shutting down: draining the requests in flight');
      await shutdown();
      logger.info('shut down');
    },
  );

  // Announced only now that the signal handlers are in place: whoever reads "listening" and
  // sends SIGTERM at once gets a graceful shutdown, not the default disposition (killed).
  const host =
    config.host === '0.0.0.0' || config.host === '::' ? 'localhost' : config.host.includes(':') ? `[${config.host}]` : config.host;
  const port = (running.server.address() as { port: number }).port;
  const baseUrl = `http://${host}:${port}`;
  out.write(first ? firstRunBanner(first, baseUrl) : startBanner(baseUrl));
  logger.info(
    { database: rt.describe, address: baseUrl, rateLimits: redisName === null ? 'in memory' : `shared on ${redisName}` },
    'clinic-api listening',
  );

  // For callers in this process (tests): the same shutdown, without exiting.
  return async () => {
    grace.uninstall();
    process.removeListener('unhandledRejection', onUnhandledRejection);
    await shutdown();
  };
}

/** Where to go, printed on stdout by every start (the API reference's page is served at /docs). */
function whereLines(baseUrl: string): string[] {
  return [
    `Dashboard (Settings > API):  ${baseUrl}/dashboard`,
    `API reference:               ${baseUrl}/docs`,
    `OpenAPI document:            ${baseUrl}/api/v1/openapi.json`,
  ];
}

/** What a start on a database that has clinics prints on stdout: where things are, never a key. */
export function startBanner(baseUrl: string): string {
  return [`clinic-api is serving ${baseUrl}`, ...whereLines(baseUrl).map((l) => `  ${l}`), ''].join('\n');
}

/** What the first start prints on stdout: the demo's key (once), a curl line, the dashboard sign-in. */
export function firstRunBanner(r: FirstRunResult, baseUrl: string): string {
  return [
    '',
    `First run: created the demo clinic ` +
      `"${r.clinicName}" (${r.counts.clientas} clientas, ${r.counts.citas} citas, ${r.counts.llamadas} llamadas).`,
    '',
    'Your demo API key (shown only now; it is stored only as a keyed hash):',
    `  ${r.key}`,
    '',
    'Try it:',
    `  curl -H "Authorization: Bearer ${r.key}" "${baseUrl}/api/v1/citas?limit=5"`,
    '',
    ...whereLines(baseUrl).flatMap((line, i) =>
      i === 0
        ? [
            line,
            `  sign in as ${r.ownerEmail} / ${r.ownerPassword}  (shown only now; \`npx clinic-api users reset-password ` +
              `--email ${r.ownerEmail}\` sets a new one)`,
          ]
        : [line],
    ),
    '',
  ].join('\n');
}
