import { randomBytes } from 'node:crypto';
import type { Command } from 'commander';
import { createClinic, createUser, listClinics } from '../services/accounts.js';
import { DomainError } from '../errors.js';
import { info, result, withRuntime, type CliContext } from './io.js';

async function readStdin(ctx: CliContext): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of ctx.io.stdin) chunks.push(Buffer.isBuffer(c) ? c : Buffer.from(String(c)));
  // Only the first line: `echo pass | ...` and here-strings add a newline.
  return Buffer.concat(chunks).toString('utf8').split(/\r?\n/)[0] ?? '';
}

export function registerAccountCommands(program: Command, ctx: CliContext): void {
  const clinics = program.command('clinics').description('manage clinics');
  clinics
    .command('create')
    .description('create a clinic; prints its id')
    .requiredOption('--name <name>', 'clinic name')
    .option('--timezone <tz>', 'IANA time zone', 'Europe/Madrid')
    .option('--currency <code>', 'ISO 4217 currency', 'EUR')
    .option('--plan <plan>', 'basic, pro, pro_total, enterprise or premium', 'pro_total')
    .option('--language <lang>', 'dashboard language: es or en', 'es')
    .action(async (o: { name: string; timezone: string; currency: string; plan: string; language: string }) => {
      const clinic = await withRuntime(ctx, (rt) =>
        createClinic(rt.database.db, { name: o.name, timezone: o.timezone, currency: o.currency, plan: o.plan, language: o.language }, ctx.io.now()));
      info(ctx, `created clinic "${clinic.name}" (${clinic.timezone}, ${clinic.currency}, plan ${clinic.plan})`);
      result(ctx, clinic.id, clinic);
    });
  clinics
    .command('list')
    .description('list clinics')
    .action(async () => {
      const rows = await withRuntime(ctx, (rt) => listClinics(rt.database.db));
      result(ctx, rows.map((c) => `${c.id}\t${c.plan}\t${c.timezone}\t${c.name}`).join('\n'), rows);
    });

  const users = program.command('users').description('manage dashboard users');
  users
    .command('create')
    .description('create a user; prints its id (and a generated password on stderr unless --password-stdin)')
    .option('--clinic <id>', 'clinic the user belongs to (not for superadmin)')
    .requiredOption('--email <email>', 'sign-in e-mail')
    .requiredOption('--role <role>', 'owner, staff or superadmin')
    .option('--password-stdin', 'read the password from the first line of stdin')
    .action(async (o: { clinic?: string; email: string; role: string; passwordStdin?: boolean }) => {
      const password = o.passwordStdin ? await readStdin(ctx) : randomBytes(12).toString('base64url');
      if (o.passwordStdin && password === '') throw new DomainError('invalid_input', '--password-stdin: no password on stdin', { field: '--password-stdin' });
      const user = await withRuntime(ctx, (rt) =>
        createUser(rt.database.db, { clinicId: o.clinic ?? null, email: o.email, role: o.role, password }, ctx.io.now()));
      info(ctx, `created ${user.role} ${user.email}`);
      if (!o.passwordStdin) info(ctx, `generated password (shown once): ${password}`);
      result(ctx, user.id, { id: user.id, email: user.email, role: user.role, clinic_id: user.clinic_id, ...(o.passwordStdin ? {} : { password }) });
    });
}
