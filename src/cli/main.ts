// clinic-api: the operator CLI (CONTRACT section 7). Human text goes to stderr, only the result
// to stdout, so commands compose in scripts; --json prints the result as JSON.
import { Command, CommanderError, Option } from 'commander';
import { ConfigError, loadConfig } from '../config.js';
import { registerAccountCommands } from './accounts.js';
import { registerDataCommands } from './data.js';
import { CliError, type Io } from './io.js';
import { registerKeyCommands } from './keys.js';
import { registerServerCommands } from './server.js';

export async function main(argv: string[], io: Io): Promise<number> {
  const program = new Command('clinic-api')
    .description('Clinic Integration API: server and operator commands')
    .addOption(new Option('--json', 'print the result as JSON on stdout'))
    .showHelpAfterError('(run with --help for usage)')
    .configureOutput({ writeOut: (s) => io.stdout.write(s), writeErr: (s) => io.stderr.write(s) })
    .exitOverride();

  const ctx = { io, config: () => loadConfig(io.env), json: () => Boolean(program.opts().json) };
  registerServerCommands(program, ctx);
  registerAccountCommands(program, ctx);
  registerKeyCommands(program, ctx);
  registerDataCommands(program, ctx);

  try {
    await program.parseAsync(argv, { from: 'user' });
    return 0;
  } catch (err) {
    if (err instanceof CommanderError) return err.exitCode === 0 ? 0 : 2;
    if (err instanceof ConfigError) {
      io.stderr.write(`clinic-api: configuration error: ${err.message}\n`);
      return 2;
    }
    if (err instanceof CliError) {
      io.stderr.write(`clinic-api: ${err.message}\n`);
      return err.exitCode;
    }
    io.stderr.write(`clinic-api: unexpected error: ${err instanceof Error ? err.message : String(err)}\n`);
    return 1;
  }
}
