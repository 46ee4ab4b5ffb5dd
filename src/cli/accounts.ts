import type { Command } from 'commander';
import { DomainError } from '../errors.js';
import { registerClinicDelete } from './erasure.js';
import { clinicTimes, info, isoIn, plural, result, withRuntime, type CliContext } from './io.js';

// Loaded when a command runs, never for --help (cli/main.ts).
const accounts = () => import('../services/accounts.js');
const apiKeys = () => import('../services/api-keys.js');

async function readStdin(ctx: CliContext): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of ctx.io.stdin) chunks.push(Buffer.isBuffer(c) ? c : Buffer.from(String(c)));
  // Only the first line: `echo pass | ...` and here-strings add a newline.
  return Buffer.concat(chunks).toString('utf8').split(/\r?\n/)[0] ?? '';
}

/** The password from stdin (--password-stdin), else a generated one that the command shows once. */
async function passwordFor(ctx: CliContext, fromStdin: boolean | undefined): Promise<string> {
  if (!fromStdin) return (await import('../services/passwords.js')).generatePassword();
  const password = await readStdin(ctx);
  if (password === '') throw new DomainError('invalid_input', '--password-stdin: no password on stdin', { field: '--password-stdin' });
  return password;
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
      const { createClinic } = await accounts();
      const clinic = await withRuntime(ctx, (rt) =>
        createClinic(
          rt.database.db,
          { name: o.name, timezone: o.timezone, currency: o.currency, plan: o.plan, language: o.language },
          ctx.io.now(),
        ),
      );
      info(ctx, `created clinic "${clinic.name}" (${clinic.timezone}, ${clinic.currency}, plan ${clinic.plan})`);
      result(ctx, clinic.id, clinic);
    });
  clinics
    .command('list')
    .description('list clinics: id, plan, active API keys, time zone, name')
    .action(async () => {
      const [{ listClinicsWithKeys }, { isApiEligible }] = await Promise.all([accounts(), apiKeys()]);
      const config = await ctx.config();
      const rows = await withRuntime(ctx, (rt) => listClinicsWithKeys(rt.database.db, ctx.io.now()));
      const times = await Promise.all(rows.map((c) => isoIn(c.timezone)));
      const out = rows.map((c, i) => ({
        id: c.id,
        name: c.name,
        plan: c.plan,
        api_access: isApiEligible(c.plan, config.apiPlans),
        active_keys: c.active_keys,
        all_keys: c.all_keys,
        timezone: c.timezone,
        currency: c.currency,
        language: c.language,
        created_at: times[i]!(c.created_at),
      }));
      result(
        ctx,
        out
          .map(
            (c) => `${c.id}\t${c.plan}${c.api_access ? '' : ' (no API)'}\t${plural(c.active_keys, 'active key')}\t${c.timezone}\t${c.name}`,
          )
          .join('\n'),
        out,
      );
    });
  clinics
    .command('set-plan')
    .description("change a clinic's plan (API keys can be created on pro_total, enterprise and premium, or API_PLANS)")
    .argument('<clinic-id>', 'the clinic id (from clinics list)')
    .argument('<plan>', 'basic, pro, pro_total, enterprise or premium')
    .action(async (clinicId: string, plan: string) => {
      const [{ setClinicPlan }, { isApiEligible, keyStatus }] = await Promise.all([accounts(), apiKeys()]);
      const config = await ctx.config();
      const { clinic, previous, activeKeys } = await withRuntime(ctx, async (rt) => {
        const changed = await setClinicPlan(rt.database.db, clinicId, plan);
        const nowS = Math.floor(ctx.io.now() / 1000);
        const keys = await rt.keys.list(clinicId);
        return { ...changed, activeKeys: keys.filter((k) => keyStatus(k, nowS) === 'active').length };
      });
      const apiAccess = isApiEligible(clinic.plan, config.apiPlans);
      const change = previous === clinic.plan ? `plan already ${clinic.plan}` : `plan ${previous} -> ${clinic.plan}`;
      const effect = apiAccess
        ? 'its owners can create API keys'
        : activeKeys
          ? `no new API keys; its ${plural(activeKeys, 'active key')} ${activeKeys === 1 ? 'keeps' : 'keep'} working until revoked ` +
            `(clinic-api keys list --clinic ${clinic.id})`
          : 'no new API keys';
      info(ctx, `clinic "${clinic.name}": ${change}; ${effect}`);
      result(ctx, clinic.id, {
        id: clinic.id,
        name: clinic.name,
        plan: clinic.plan,
        previous_plan: previous,
        api_access: apiAccess,
        active_keys: activeKeys,
      });
    });

  registerClinicDelete(clinics, ctx);

  const users = program.command('users').description('manage dashboard users');
  users
    .command('create')
    .description('create a user; prints its id (and a generated password on stderr unless --password-stdin)')
    .option('--clinic <id>', 'clinic the user belongs to (not for superadmin)')
    .requiredOption('--email <email>', 'sign-in e-mail')
    .requiredOption('--role <role>', 'owner, staff or superadmin')
    .option('--password-stdin', 'read the password from the first line of stdin')
    .action(async (o: { clinic?: string; email: string; role: string; passwordStdin?: boolean }) => {
      const { createUser } = await accounts();
      const password = await passwordFor(ctx, o.passwordStdin);
      const user = await withRuntime(ctx, (rt) =>
        createUser(rt.database.db, { clinicId: o.clinic ?? null, email: o.email, role: o.role, password }, ctx.io.now()),
      );
      info(ctx, `created ${user.role} ${user.email}`);
      if (!o.passwordStdin) info(ctx, `generated password (shown once): ${password}`);
      result(ctx, user.id, {
        id: user.id,
        email: user.email,
        role: user.role,
        clinic_id: user.clinic_id,
        ...(o.passwordStdin ? {} : { password }),
      });
    });
  users
    .command('list')
    .description("list a clinic's dashboard users: id, role, e-mail, created")
    .requiredOption('--clinic <id>', 'clinic id')
    .action(async (o: { clinic: string }) => {
      const { listUsers } = await accounts();
      const { rows, iso } = await withRuntime(ctx, async (rt) => ({
        rows: await listUsers(rt.database.db, o.clinic),
        iso: await clinicTimes(rt, o.clinic),
      }));
      const out = rows.map((u) => ({
        id: u.id,
        email: u.email,
        role: u.role,
        clinic_id: u.clinic_id,
        created_at: iso(u.created_at),
      }));
      result(ctx, out.map((u) => `${u.id}\t${u.role}\t${u.email}\tcreated ${u.created_at}`).join('\n'), out);
    });
  users
    .command('reset-password')
    .description(
      "set a user's password and sign them out of the dashboard everywhere; prints the user id (a generated password on stderr unless " +
        '--password-stdin)',
    )
    .requiredOption('--email <email>', 'the sign-in e-mail')
    .option('--password-stdin', 'read the new password from the first line of stdin')
    .action(async (o: { email: string; passwordStdin?: boolean }) => {
      const password = await passwordFor(ctx, o.passwordStdin);
      const { resetPassword } = await accounts();
      const { user, sessionsEnded } = await withRuntime(ctx, (rt) => resetPassword(rt.database.db, o.email, password));
      info(ctx, `new password set for ${user.role} ${user.email}; ended ${plural(sessionsEnded, 'dashboard session')}`);
      if (!o.passwordStdin) info(ctx, `generated password (shown once): ${password}`);
      result(ctx, user.id, {
        id: user.id,
        email: user.email,
        role: user.role,
        clinic_id: user.clinic_id,
        sessions_ended: sessionsEnded,
        ...(o.passwordStdin ? {} : { password }),
      });
    });
}
