// Entry: config -> database -> first run -> app -> listen; graceful close on SIGTERM/SIGINT.
import type { Config } from './config.js';
import { firstRun, firstRunBanner } from './first-run.js';
import { buildApp } from './http/app.js';
import { openRuntime } from './runtime.js';
import { MemoryGcraLimiter } from './services/rate-limit.js';

export async function serve(config: Config, out: NodeJS.WritableStream = process.stdout): Promise<() => Promise<void>> {
  const rt = await openRuntime(config);
  const app = await buildApp({
    config,
    database: rt.database,
    keys: rt.keys,
    limiter: new MemoryGcraLimiter(config.rateLimitRps, config.rateLimitBurst),
    authFailLimiter: new MemoryGcraLimiter(config.authFailRps, config.authFailBurst),
  });
  const log = app.log;
  // API usage for the dashboard is counted in memory and written in one batch every 30 s; the
  // app's onClose hook writes the rest, before the database closes below.
  app.usage.start();
  if (rt.pepperGenerated) log.warn('API_KEY_PEPPER is not set: generated one into DATA_DIR/api-key-pepper; back it up (losing it voids every key)');
  if (config.databaseUrl && !config.apiKeyPepper) log.warn('with PostgreSQL, set API_KEY_PEPPER so that every instance shares it');

  const first = await firstRun(rt, Date.now());
  const address = await app.listen({ port: config.port, host: config.host });
  log.info({ database: rt.describe, address }, 'clinic-api listening');
  if (first) {
    const host = config.host === '0.0.0.0' || config.host === '::' ? 'localhost' : config.host.includes(':') ? `[${config.host}]` : config.host;
    const port = (app.server.address() as { port: number }).port;
    out.write(firstRunBanner(first, `http://${host}:${port}`));
  }

  let closing: Promise<void> | null = null;
  const close = () => {
    closing ??= (async () => {
      log.info('shutting down');
      await app.close();
      await rt.close();
    })();
    return closing;
  };
  for (const sig of ['SIGTERM', 'SIGINT'] as const) {
    process.once(sig, () => {
      close().then(() => process.exit(0), () => process.exit(1));
    });
  }
  return close;
}
