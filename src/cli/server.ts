import type { Command } from 'commander';
import { info, result, type CliContext } from './io.js';
import { packageVersion } from './version.js';

export function registerServerCommands(program: Command, ctx: CliContext): void {
  program
    .command('serve')
    .description('run the API server (what npm start runs); on an empty database it creates a demo clinic first')
    .action(async () => {
      const config = await ctx.config();
      // Traces only when an OTLP endpoint is set, started before the server's modules load (the
      // instrumentations patch them as they are imported); unset, no tracing code is loaded.
      const { endpoint, tracesEndpoint, disabled } = config.tracing;
      let tracing: import('../telemetry/start.js').Tracing | undefined;
      if ((endpoint !== null || tracesEndpoint !== null) && !disabled) {
        const { startTracing } = await import('../telemetry/start.js');
        tracing = await startTracing(config.tracing, packageVersion());
      }
      // Loaded only now: the server (Fastify and every plugin) is most of what a start loads.
      const { serve } = await import('../server.js');
      await serve(config, ctx.io.stdout, { tracing });
      // Keep running until a signal; serve() installs the handlers.
      await new Promise(() => {});
    });

  program
    .command('migrate')
    .description('apply database migrations (idempotent)')
    .action(async () => {
      const { migrateDatabase } = await import('../runtime.js');
      const applied = await migrateDatabase(await ctx.config());
      info(ctx, applied.length ? `applied: ${applied.join(', ')}` : 'database is up to date');
      result(ctx, applied.join('\n'), { applied });
    });
}
