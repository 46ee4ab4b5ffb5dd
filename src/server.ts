// The server: runtime (runtime.ts: config -> database -> services) -> app (app.ts) -> listen -> the
// runtime's background services -> first run -> where to go, on stdout; a graceful shutdown on
// SIGTERM/SIGINT (close-with-grace): the drain begins in the signal's own callback
// (http/plugins/drain.ts: /readyz 503, Connection: close, requests held until the listener closes once nothing waits
// in it, every request already sent answered, idle connections closed), then the runtime closes
// everything in reverse order (runtime.ts: the background jobs, the app once drained, the usage
// counts and request log written, the database closed), exit 0, all within SHUTDOWN_TIMEOUT_S or
// exit 1. The runtime stops everything, on every path; this file stops nothing itself. Only the
// CLI's `serve` command starts it (cli/server.ts).
import fs from 'node:fs';
import path from 'node:path';
import closeWithGrace from 'close-with-grace';
import type { FastifyInstance } from 'fastify';
import type { Config } from './config.js';

import { buildApp } from './app.js';
import { countsText } from './demo/sizes.js';
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
 * Where the first start writes the demo's key and the demo owner's password when standard output
 * is not a terminal (in DATA_DIR, mode 0600).
 */
export const FIRST_RUN_FILE = 'first-run-credentials.txt';

export interface ServeOptions {
  /**
   * Tracing, when on (telemetry/start.ts): it logs its exports' failures through the runtime's
   * logger, and exports the spans still waiting and stops after everything else at shutdown.
   */
  tracing?: import('./telemetry/start.js').Tracing;
}

export async function serve(
  config: Config,
  out: NodeJS.WritableStream & { isTTY?: boolean } = process.stdout,
  options: ServeOptions = {},
): Promise<() => Promise<void>> {
  // The server's SQLite connection never waits for the write lock inside a statement (services/write-lock.ts).
  const rt = await openRuntime(config, { server: true });
  options.tracing?.reportTo(rt.log);
  const redisName = config.redisUrl === null ? null : describeRedisUrl(config.redisUrl);
  let running: FastifyInstance;
  let first: FirstRunResult | null;
  try {
    const app = (running = await buildApp(rt));
    // The runtime closes the app after its background jobs: the drain (begun at the signal, or
    // now after a failed start), then the app; the database stays open for the last response.
    rt.closeServerWith(async () => {
      app.lifecycle.beginDrain(app.server);
      await app.lifecycle.drained();
      await app.close();
    });
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
    // Listen before the first run: if the port is taken, the start fails before the demo is made,
    // so the next start still makes it and prints its key and password (made after a failed
    // listen, they would be shown to no one).
    // Fastify logs a "Server listening at" line of its own; the service's line (after the first
    // run, below) says that and more, once. Its level is raised for the listen call alone: the
    // plugins' loggers were made by ready() before it, and no request arrives before it listens.
    await app.ready();
    const level = app.log.level;
    app.log.level = 'warn';
    try {
      await app.listen({ port: config.port, host: config.host });
    } catch (err) {
      throw explainListenError(err, config);
    } finally {
      app.log.level = level;
    }
    // The usage and request-log writers, the retention jobs, the webhook deliveries.
    await rt.startServices();
    first = await firstRun(rt.database, rt.keys, Date.now());
  } catch (err) {
    // Nothing may keep the process alive after a failed start (e.g. an idle PostgreSQL pool).
    await rt.close().catch(() => {});
    throw err;
  }
  const logger = running.log;
  let closing: Promise<void> | null = null;
  const shutdown = () => {
    closing ??= (async () => {
      // The listener closes once the connections the kernel queued before it are accepted (their
      // requests held meanwhile), at the latest after half the shutdown's time, which leaves the
      // other half to answer them (http/plugins/drain.ts).
      running.lifecycle.beginDrain(running.server, {
        closeListenerWithinMs: (config.shutdownTimeoutS * 1000) / 2,
        onListenerClosed: ({ atDeadline, ...closed }) =>
          atDeadline
            ? logger.warn(closed, 'listener closed at its deadline: connections still queued in the kernel were reset')
            : logger.info(closed, 'listener closed: new connections are refused'),
      });
      // Then everything stops once, in reverse order: the delivery worker at once (its leases
      // given up while the requests drain), the app once drained, the database last (runtime.ts).
      await rt.close();
      await options.tracing?.stop();
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
  // The first start's secrets go to a terminal only: under Docker, systemd or a pipe, standard
  // output is a log that is kept and shipped, so they go to a file only this user can read.
  if (first === null) out.write(startBanner(baseUrl));
  else if (out.isTTY === true) out.write(firstRunBanner(first, baseUrl));
  else out.write(firstRunNotice(first, baseUrl, writeFirstRunFile(config.dataDir, firstRunBanner(first, baseUrl))));
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
    `MCP server (AI assistants):  ${baseUrl}/mcp`,
  ];
}

/** What a start on a database that has clinics prints on stdout: where things are, never a key. */
export function startBanner(baseUrl: string): string {
  return [`clinic-api is serving ${baseUrl}`, ...whereLines(baseUrl).map((l) => `  ${l}`), ''].join('\n');
}

/**
 * Writes the first start's banner to DATA_DIR/first-run-credentials.txt, readable by this user
 * only (mode 0600, made anew: an older file's mode is not trusted). The file's path, or the error
 * that kept it from being written.
 */
function writeFirstRunFile(dataDir: string, text: string): { file: string } | { error: string } {
  const file = path.resolve(dataDir, FIRST_RUN_FILE);
  try {
    fs.mkdirSync(dataDir, { recursive: true });
    fs.rmSync(file, { force: true });
    fs.writeFileSync(file, text, { mode: 0o600, flag: 'wx' });
    return { file };
  } catch (err) {
    return { error: (err as Error).message };
  }
}

/** What the first start prints when stdout is not a terminal: what it made, and where its secrets are (never the secrets). */
export function firstRunNotice(r: FirstRunResult, baseUrl: string, written: { file: string } | { error: string }): string {
  const where =
    'file' in written
      ? [
          `The demo API key and the demo owner's password (${r.ownerEmail}) are in ${written.file},`,
          'readable only by this user: standard output is not a terminal (it may be a log that is kept), so they are not printed.',
          'Read it, then delete it.',
        ]
      : [
          `The demo API key and the demo owner's password are not printed (standard output is not a terminal), and could not be`,
          `written to DATA_DIR (${written.error}): \`clinic-api users reset-password --email ${r.ownerEmail}\` sets a password,`,
          'and the dashboard (Settings > API) makes a key.',
        ];
  return [
    '',
    `First run: created the demo clinic ` + `"${r.clinicName}" (${countsText(r.counts)}).`,
    `Its clinic id (the CLI's --clinic): ${r.clinicId}`,
    ...where,
    '',
    ...whereLines(baseUrl),
    '',
  ].join('\n');
}

/** What the first start prints on a terminal (or writes to its file): the demo's key (once), a curl line, the dashboard sign-in. */
export function firstRunBanner(r: FirstRunResult, baseUrl: string): string {
  return [
    '',
    `First run: created the demo clinic ` + `"${r.clinicName}" (${countsText(r.counts)}).`,
    `Its clinic id (the CLI's --clinic): ${r.clinicId}`,
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
            `  sign in as ${r.ownerEmail} / ${r.ownerPassword}  (shown only now; \`clinic-api users reset-password ` +
              `--email ${r.ownerEmail}\` sets a new one)`,
          ]
        : [line],
    ),
    '',
  ].join('\n');
}
