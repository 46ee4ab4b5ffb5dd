// The server: runtime (config -> database -> services) -> first run -> app (app.ts) -> listen, and
// a graceful close on SIGTERM/SIGINT. Only the CLI's `serve` command starts it (cli/server.ts).
import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import type { Config } from './config.js';

import { buildApp } from './app.js';
import { openRuntime } from './runtime.js';
import { firstRun, type FirstRunResult } from './services/first-run.js';
import { MemoryGcraLimiter } from './services/rate-limit.js';

/** How long a graceful shutdown may take before the process exits anyway. */
const SHUTDOWN_DEADLINE_MS = 10_000;

export async function serve(config: Config, out: NodeJS.WritableStream = process.stdout): Promise<() => Promise<void>> {
  let log: FastifyBaseLogger | undefined;
  const rt = await openRuntime(config, {
    onBackgroundError: (err) => log?.error({ err }, 'background database write failed (last_used_at)'),
  });
  let app: FastifyInstance | undefined;
  let first: FirstRunResult | null;
  try {
    app = await buildApp({
      config,
      database: rt.database,
      keys: rt.keys,
      limiter: new MemoryGcraLimiter(config.rateLimitRps, config.rateLimitBurst),
      authFailLimiter: new MemoryGcraLimiter(config.authFailRps, config.authFailBurst),
    });
    log = app.log;
    if (rt.pepperGenerated) log.warn('API_KEY_PEPPER is not set: generated one into DATA_DIR/api-key-pepper; back it up (losing it voids every key)');
    first = await firstRun(rt.database, rt.keys, Date.now());
    // API usage for the dashboard is counted in memory and written in one batch every 30 s; the
    // app's onClose hook writes the rest, before the database closes below.
    app.usage.start();
    // Events past EVENT_RETENTION_DAYS leave the change feed's log, in the background.
    app.retention.start();
    const address = await app.listen({ port: config.port, host: config.host });
    log.info({ database: rt.describe, address }, 'clinic-api listening');
  } catch (err) {
    // Nothing may keep the process alive after a failed start (e.g. an idle PostgreSQL pool).
    await app?.close().catch(() => {});
    await rt.close().catch(() => {});
    throw err;
  }
  const running = app;
  if (first) {
    const host = config.host === '0.0.0.0' || config.host === '::' ? 'localhost' : config.host.includes(':') ? `[${config.host}]` : config.host;
    const port = (running.server.address() as { port: number }).port;
    out.write(firstRunBanner(first, `http://${host}:${port}`));
  }

  let closing: Promise<void> | null = null;
  const close = () => {
    closing ??= (async () => {
      running.log.info('shutting down');
      await running.close();
      await rt.close();
    })();
    return closing;
  };
  for (const sig of ['SIGTERM', 'SIGINT'] as const) {
    process.once(sig, () => {
      setTimeout(() => {
        running.log.error('shutdown took too long; exiting');
        process.exit(1);
      }, SHUTDOWN_DEADLINE_MS).unref();
      close().then(() => process.exit(0), () => process.exit(1));
    });
  }
  return close;
}

/** What the first start prints on stdout: the demo's key (once), a curl line, the dashboard sign-in. */
export function firstRunBanner(r: FirstRunResult, baseUrl: string): string {
  return [
    '',
    `First run: created the demo clinic "${r.clinicName}" (${r.counts.clientas} clientas, ${r.counts.citas} citas, ${r.counts.llamadas} llamadas).`,
    '',
    'Your demo API key (shown only now; it is stored only as a keyed hash):',
    `  ${r.key}`,
    '',
    'Try it:',
    `  curl -H "Authorization: Bearer ${r.key}" "${baseUrl}/api/v1/citas?limit=5"`,
    '',
    `Dashboard sign-in (Settings > API): ${baseUrl}/dashboard  as ${r.ownerEmail} / ${r.ownerPassword}`,
    `OpenAPI document: ${baseUrl}/api/v1/openapi.json`,
    '',
  ].join('\n');
}
