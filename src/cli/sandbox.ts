// `clinic-api sandbox reset --clinic ID`: test mode's sandbox of a clinic, started again (made if
// it had none). Its records are replaced by fresh synthetic ones; its feed's earlier cursors are
// 410 cursor_expired from now; test keys and test webhook endpoints stay.
import type { Command } from 'commander';
import { info, result, withRuntime, type CliContext } from './io.js';

export function registerSandboxCommands(program: Command, ctx: CliContext): void {
  const sandbox = program.command('sandbox').description("a clinic's test-mode sandbox (what test keys read)");
  sandbox
    .command('reset')
    .description("give the clinic's sandbox fresh synthetic data; readers of its feed get 410 cursor_expired and start again")
    .requiredOption('--clinic <id>', 'the live clinic id (from clinics list)')
    .action(async (o: { clinic: string }) => {
      const out = await withRuntime(ctx, (rt) => rt.sandboxes.reset(o.clinic));
      info(ctx, `the sandbox of clinic ${o.clinic} has fresh data; its feed's earlier cursors are now 410 cursor_expired`);
      result(ctx, [`sandbox ${out.sandboxId}`, ...Object.entries(out.counts).map(([name, n]) => `${name}: ${n}`)].join('\n'), {
        clinic_id: o.clinic,
        sandbox_id: out.sandboxId,
        ...out.counts,
      });
    });
}
