import type { Command } from 'commander';
import { info, result, type CliContext } from './io.js';

export function registerServerCommands(program: Command, ctx: CliContext): void {
  program
    .command('serve')
    .description('run the API server (what npm start runs); on an empty database it creates a demo clinic first')
    .action(async () => {
      // Loaded only now: the server (Fastify and every plugin) is most of what a start loads.
      const { serve } = await import('../server.js');
      await serve(await ctx.config(), ctx.io.stdout);
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
