// clinic-api: the operator CLI. Human text goes to stderr, only the result to stdout, so
// commands compose in scripts; --json prints the result as JSON. main() is where the CLI maps
// DomainError to its exit codes.
import { Command, CommanderError, Option } from 'commander';
import { DomainError, type DomainReason } from '../errors.js';
import { codeOf, withoutDatabasePassword } from '../startup-errors.js';
import { registerAccountCommands } from './accounts.js';
import { registerBackupCommands } from './backup.js';
import { registerDataCommands } from './data.js';
import { registerErasureCommands } from './erasure.js';
import { registerExportCommands } from './exports.js';
import type { Io } from './io.js';
import { registerAppCommands } from './apps.js';
import { registerKeyCommands } from './keys.js';
import { registerLogCommands } from './logs.js';
import { registerSandboxCommands } from './sandbox.js';
import { registerServerCommands } from './server.js';
import { packageVersion } from './version.js';
import { registerWebhookCommands } from './webhooks.js';

/**
 * Exit codes (docs/cli.md): 1 failure (e.g. an import refused, the database unreachable, the port
 * taken), 2 bad usage, input, unknown id or configuration, 3 plan not eligible.
 */
function exitCode(reason: DomainReason): number {
  switch (reason) {
    case 'invalid_input':
    case 'invalid_config':
    case 'not_found':
    case 'conflict':
      return 2;
    case 'plan_not_eligible':
      return 3;
    default:
      return 1;
  }
}

export async function main(argv: string[], io: Io): Promise<number> {
  // `--version` alone (commander's own handling cannot honour --json).
  const withoutJson = argv.filter((a) => a !== '--json');
  if (withoutJson.length === 1 && (withoutJson[0] === '--version' || withoutJson[0] === '-V')) {
    const version = packageVersion();
    io.stdout.write(argv.includes('--json') ? `${JSON.stringify({ version })}\n` : `${version}\n`);
    return 0;
  }
  const program = new Command('clinic-api')
    .description('Clinic Integration API: server and operator commands')
    .version(packageVersion(), '-V, --version', 'print the version of clinic-api')
    .addOption(new Option('--json', 'print the result as JSON on stdout'))
    .showHelpAfterError('(run with --help for usage)')
    .configureOutput({ writeOut: (s) => io.stdout.write(s), writeErr: (s) => io.stderr.write(s) })
    .exitOverride();

  // Every command module is cheap to load: each loads what it runs (services, the database, the
  // server) only when it runs, so --help and --version load none of it.
  const ctx = { io, config: async () => (await import('../config.js')).loadConfig(io.env), json: () => Boolean(program.opts().json) };
  registerServerCommands(program, ctx);
  registerAccountCommands(program, ctx);
  registerKeyCommands(program, ctx);
  registerAppCommands(program, ctx);
  registerDataCommands(program, ctx);
  registerWebhookCommands(program, ctx);
  registerErasureCommands(program, ctx);
  registerExportCommands(program, ctx);
  registerBackupCommands(program, ctx);
  registerLogCommands(program, ctx);
  registerSandboxCommands(program, ctx);

  try {
    await program.parseAsync(argv, { from: 'user' });
    return 0;
  } catch (err) {
    if (err instanceof CommanderError) return err.exitCode === 0 ? 0 : 2;
    if (err instanceof DomainError) {
      io.stderr.write(`clinic-api: ${err.reason === 'invalid_config' ? 'configuration error: ' : ''}${err.message}\n`);
      return exitCode(err.reason);
    }
    // The message and its code, never a stack; and never DATABASE_URL's password, whatever a driver
    // put in it. The code (SQLITE_BUSY_SNAPSHOT, ECONNRESET...) is what an operator searches for,
    // and it tells apart errors whose messages are alike ("database is locked").
    const message = err instanceof Error ? err.message : String(err);
    const code = codeOf(err);
    const text = code !== undefined && !message.includes(code) ? `${message} (${code})` : message;
    io.stderr.write(`clinic-api: unexpected error: ${withoutDatabasePassword(text, io.env.DATABASE_URL)}\n`);
    return 1;
  }
}
