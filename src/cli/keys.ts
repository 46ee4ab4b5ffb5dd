import type { Command } from 'commander';
import { DomainError } from '../errors.js';
import { info, iso, result, withRuntime, type CliContext } from './io.js';

// Loaded when a command runs, never for --help (cli/main.ts).
const apiKeys = () => import('../services/api-keys.js');

const EXPIRES_RE = /^(\d{1,4})d$/;

/**
 * A key id as typed by the operator. The key itself pasted here is refused without being repeated
 * (it would land in the terminal's scrollback and logs once more): only its last four characters,
 * which `keys list` shows as the hint.
 */
async function checkKeyId(value: string): Promise<string> {
  if ((await apiKeys()).looksLikeApiKey(value)) {
    throw new DomainError(
      'invalid_input',
      `that is an API key, not a key id: revoke a key by its id, the first column of \`clinic-api keys list --clinic CLINIC_ID\` (this key is the one listed with hint …${value.trim().slice(-4)})`,
      { field: 'key-id' },
    );
  }
  return value;
}

export function registerKeyCommands(program: Command, ctx: CliContext): void {
  const keys = program.command('keys').description('manage API keys');
  keys
    .command('create')
    .description('create an API key; prints the key, once')
    .requiredOption('--clinic <id>', 'clinic id')
    .requiredOption('--name <name>', 'what the key is for, e.g. "Zapier"')
    .option('--expires-in <days>', 'lifetime such as 30d, 90d or 365d (default: never expires)')
    .action(async (o: { clinic: string; name: string; expiresIn?: string }) => {
      let expiresAt: number | null = null;
      if (o.expiresIn !== undefined) {
        const m = EXPIRES_RE.exec(o.expiresIn);
        if (!m || Number(m[1]) < 1)
          throw new DomainError('invalid_input', `--expires-in must be a number of days such as 30d, got "${o.expiresIn}"`, {
            field: '--expires-in',
          });
        expiresAt = Math.floor(ctx.io.now() / 1000) + Number(m[1]) * 86_400;
      }
      const issued = await withRuntime(ctx, (rt) => rt.keys.create({ clinicId: o.clinic, name: o.name, expiresAt, createdBy: null }));
      info(
        ctx,
        `created key ${issued.id} "${issued.name}"${expiresAt ? `, expires ${iso(expiresAt)}` : ''}. Store it now: it cannot be shown again.`,
      );
      result(ctx, issued.key, {
        id: issued.id,
        key: issued.key,
        name: issued.name,
        clinic_id: issued.clinicId,
        hint: issued.hint,
        expires_at: iso(expiresAt),
      });
    });

  keys
    .command('list')
    .description("list a clinic's keys: id, status, hint, name, last use (never the keys themselves)")
    .requiredOption('--clinic <id>', 'clinic id')
    .action(async (o: { clinic: string }) => {
      const [{ requireClinic }, { keyStatus }] = await Promise.all([import('../services/accounts.js'), apiKeys()]);
      const rows = await withRuntime(ctx, async (rt) => {
        await requireClinic(rt.database.db, o.clinic);
        return rt.keys.list(o.clinic);
      });
      const nowS = Math.floor(ctx.io.now() / 1000);
      const out = rows.map((k) => ({
        id: k.id,
        name: k.name,
        hint: `…${k.hint}`,
        status: keyStatus(k, nowS),
        created_by: k.created_by_email,
        created_at: iso(k.created_at),
        expires_at: iso(k.expires_at),
        revoked_at: iso(k.revoked_at),
        last_used_at: iso(k.last_used_at),
      }));
      result(ctx, out.map((k) => `${k.id}\t${k.status}\t${k.hint}\t${k.name}\tlast used ${k.last_used_at ?? 'never'}`).join('\n'), out);
    });

  keys
    .command('revoke')
    .description('revoke a key by its id (from keys list)')
    .argument('<key-id>', 'the key id (the first column of keys list), not the key')
    .action(async (given: string) => {
      const keyId = await checkKeyId(given);
      const outcome = await withRuntime(ctx, async (rt) => {
        // The operator names a key, not a clinic: find its clinic first (operator-scoped), then
        // revoke it there, as every key query names its clinic.
        const clinicId = await rt.keys.locateKey(keyId);
        const existing = clinicId === undefined ? undefined : await rt.keys.get(clinicId, keyId);
        if (clinicId === undefined || !existing)
          throw new DomainError('not_found', `no API key with id ${keyId} (clinic-api keys list --clinic CLINIC_ID shows the ids)`, {
            field: 'key-id',
          });
        if (existing.revoked_at !== null) return 'already';
        // With REDIS_URL the revocation is announced to every running server (they evict it at once).
        const done = await rt.keys.revokeEverywhere(clinicId, keyId);
        return done?.announced ? 'announced' : rt.config.redisUrl !== null ? 'not-announced' : 'revoked';
      });
      info(
        ctx,
        {
          already: `key ${keyId} was already revoked`,
          announced: `revoked key ${keyId}; running servers reject it now (announced through Redis)`,
          'not-announced': `revoked key ${keyId}; Redis (REDIS_URL) did not answer, so running servers reject it within 5 seconds, when their key cache expires`,
          revoked: `revoked key ${keyId}; running servers reject it within 5 seconds`,
        }[outcome],
      );
      result(ctx, keyId, { id: keyId, revoked: true });
    });
}
