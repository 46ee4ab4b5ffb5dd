import type { Command } from 'commander';
import { migrateDatabase } from '../runtime.js';
import { serve } from '../server.js';
import { info, result, type CliContext } from './io.js';

export function registerServerCommands(program: Command, ctx: CliContext): void {
  program
    .command('serve')
    .description('run the API server (what npm start runs); on an empty database it creates a demo clinic first')
    .action(async () => {
      await serve(ctx.config(), ctx.io.stdout);
      // Keep running until a signal; serve() installs the handlers.
      await new Promise(() => {});
    });

  program
    .command('migrate')
    .description('apply database migrations (idempotent)')
    .action(async () => {
      const applied = await migrateDatabase(ctx.config());
      info(ctx, applied.length ? `applied: ${applied.join(', ')}` : 'database is up to date');
      result(ctx, applied.join('\n'), { applied });
    });
}
