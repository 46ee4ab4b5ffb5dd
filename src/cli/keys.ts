import type { Command } from 'commander';
import { DomainError } from '../errors.js';
import type { ApiKeyListing } from '../services/api-keys.js';
import type { IssuedKey } from '../services/key-rules.js';
import { clinicTimes, info, isoIn, result, withRuntime, type CliContext, type Iso } from './io.js';

// Loaded when a command runs, never for --help (cli/main.ts).
const apiKeys = () => import('../services/api-keys.js');
const scopes = () => import('../domain/scopes.js');
const allowedIps = () => import('../domain/allowed-ips.js');

const EXPIRES_RE = /^(\d{1,4})d$/;
const OVERLAP_RE = /^(\d{1,6})([smhd]?)$/;
const UNIT_S = { '': 1, s: 1, m: 60, h: 3_600, d: 86_400 } as const;

const SCOPES_HELP = 'comma-separated, of: citas:read, clientas:read, llamadas:read, eventos:read, contacto:read, webhooks:write';
const IPS_HELP = 'addresses and CIDR ranges the key may be used from, comma-separated, e.g. 203.0.113.0/24,2001:db8::1';

/** A new key as `--json` prints it (keys create, keys roll). */
function issuedJson(issued: IssuedKey, iso: Iso) {
  return {
    id: issued.id,
    key: issued.key,
    mode: issued.mode,
    name: issued.name,
    clinic_id: issued.clinicId,
    hint: issued.hint,
    scopes: issued.scopes,
    allowed_ips: issued.allowedIps,
    expires_at: iso(issued.expiresAt),
  };
}

/**
 * A key id as typed by the operator. The key itself pasted here is refused without being repeated
 * (it would land in the terminal's scrollback and logs once more): only its last four characters,
 * which `keys list` shows as the hint.
 */
async function checkKeyId(value: string, verb: string): Promise<string> {
  if ((await apiKeys()).looksLikeApiKey(value)) {
    throw new DomainError(
      'invalid_input',
      `that is an API key, not a key id: ${verb} a key by its id, the first column of \`clinic-api keys list --clinic CLINIC_ID\` (this ` +
        `key is the one listed with hint …${value.trim().slice(-4)})`,
      { field: 'key-id' },
    );
  }
  return value;
}

/** --overlap: 0 to 7 days, as 90s, 30m, 24h, 7d (a bare number is seconds). */
function overlapSeconds(raw: string): number {
  const m = OVERLAP_RE.exec(raw.trim());
  const s = m ? Number(m[1]) * UNIT_S[m[2] as keyof typeof UNIT_S] : NaN;
  if (!m || s > 7 * 86_400)
    throw new DomainError('invalid_input', `--overlap must be from 0 to 7d (168h), such as 0, 30m, 24h or 7d; got "${raw}"`, {
      field: '--overlap',
    });
  return s;
}

/**
 * A key as `keys list --json` shows it (never the key, never its hash). `ends_at`: a rolled key
 * still in its overlap, when it stops working (null for every other key).
 */
function keyJson(k: ApiKeyListing, status: string, iso: Iso) {
  return {
    id: k.id,
    name: k.name,
    mode: k.mode === 'test' ? 'test' : 'live',
    hint: `…${k.hint}`,
    status,
    ends_at: status === 'active' && k.replaced_by !== null ? iso(k.expires_at) : null,
    scopes: k.scopes.split(' '),
    allowed_ips: k.allowed_ips === null ? null : k.allowed_ips.split(','),
    created_by: k.created_by_email,
    created_at: iso(k.created_at),
    expires_at: iso(k.expires_at),
    revoked_at: iso(k.revoked_at),
    last_used_at: iso(k.last_used_at),
    replaced_by: k.replaced_by,
  };
}

/** The status column of `keys list`: a rolled key in its overlap says when it ends and what replaced it. */
function statusText(k: ReturnType<typeof keyJson>): string {
  const status = k.mode === 'test' ? `${k.status} test key` : k.status;
  return k.ends_at === null ? status : `${status}, ends at ${k.ends_at} (replaced by ${k.replaced_by})`;
}

/** "running servers use it now" or why not: the announcement's outcome, for the operator. */
function reach(announced: boolean, redis: boolean, what: string): string {
  if (announced) return `running servers ${what} now (announced through Redis)`;
  if (redis) return `Redis (REDIS_URL) did not answer, so running servers ${what} within 5 seconds, when their key cache expires`;
  return `running servers ${what} within 5 seconds`;
}

/** The clinic of key `keyId` (operator-scoped), or exit 2 naming it. */
async function clinicOfKey(rt: import('../runtime.js').Runtime, keyId: string): Promise<string> {
  const clinicId = await rt.keys.locateKey(keyId);
  if (clinicId === undefined || !(await rt.keys.get(clinicId, keyId)))
    throw new DomainError('not_found', `no API key with id ${keyId} (clinic-api keys list --clinic CLINIC_ID shows the ids)`, {
      field: 'key-id',
    });
  return clinicId;
}

export function registerKeyCommands(program: Command, ctx: CliContext): void {
  const keys = program.command('keys').description('manage API keys');
  keys
    .command('create')
    .description('create an API key; prints the key, once')
    .requiredOption('--clinic <id>', 'clinic id')
    .requiredOption('--name <name>', 'what the key is for, e.g. "Zapier"')
    .option('--expires-in <days>', 'lifetime such as 30d, 90d or 365d (default: never expires)')
    .option('--scopes <list>', `what the key may do (default: all but webhooks:write), ${SCOPES_HELP}`)
    .option('--allowed-ips <list>', `${IPS_HELP} (default: any address)`)
    .option('--test', "a test key (<prefix>_test_...): reads the clinic's sandbox of synthetic data, never live data")
    .action(async (o: { clinic: string; name: string; expiresIn?: string; scopes?: string; allowedIps?: string; test?: boolean }) => {
      let expiresAt: number | null = null;
      if (o.expiresIn !== undefined) {
        const m = EXPIRES_RE.exec(o.expiresIn);
        if (!m || Number(m[1]) < 1)
          throw new DomainError('invalid_input', `--expires-in must be a number of days such as 30d, got "${o.expiresIn}"`, {
            field: '--expires-in',
          });
        expiresAt = Math.floor(ctx.io.now() / 1000) + Number(m[1]) * 86_400;
      }
      const chosen = o.scopes === undefined ? undefined : (await scopes()).parseScopes(o.scopes, '--scopes');
      const ips = o.allowedIps === undefined ? null : (await allowedIps()).parseAllowedIps(o.allowedIps, '--allowed-ips');
      const { issued, iso } = await withRuntime(ctx, async (rt) => ({
        issued: await rt.keys.create({
          clinicId: o.clinic,
          name: o.name,
          expiresAt,
          createdBy: null,
          scopes: chosen,
          allowedIps: ips,
          mode: o.test ? 'test' : 'live',
        }),
        iso: await clinicTimes(rt, o.clinic),
      }));
      const from = issued.allowedIps ? `; from ${issued.allowedIps.join(', ')} only` : '';
      info(
        ctx,
        `created ${issued.mode === 'test' ? 'test key' : 'key'} ${issued.id} "${issued.name}" (${issued.scopes.join(', ')}${from})` +
          `${expiresAt ? `, expires ${iso(expiresAt)}` : ''}. Store it now: it cannot be shown again.`,
      );
      result(ctx, issued.key, issuedJson(issued, iso));
    });

  keys
    .command('list')
    .description("list a clinic's keys: id, status (test keys say so), hint, name, last use, scopes (never the keys themselves)")
    .requiredOption('--clinic <id>', 'clinic id')
    .action(async (o: { clinic: string }) => {
      const [{ requireClinic }, { keyStatus }] = await Promise.all([import('../services/accounts.js'), apiKeys()]);
      const { rows, iso } = await withRuntime(ctx, async (rt) => {
        const clinic = await requireClinic(rt.database.db, o.clinic);
        return { rows: await rt.keys.list(o.clinic), iso: await isoIn(clinic.timezone) };
      });
      const nowS = Math.floor(ctx.io.now() / 1000);
      const out = rows.map((k) => keyJson(k, keyStatus(k, nowS), iso));
      result(
        ctx,
        out
          .map((k) => `${k.id}\t${statusText(k)}\t${k.hint}\t${k.name}\tlast used ${k.last_used_at ?? 'never'}\t${k.scopes.join(',')}`)
          .join('\n'),
        out,
      );
    });

  keys
    .command('update')
    .description('rename a key or change its scopes or addresses; every server uses the change within 5 seconds')
    .argument('<key-id>', 'the key id (the first column of keys list), not the key')
    .option('--name <name>', 'a new name')
    .option('--scopes <list>', `its scopes from now on, ${SCOPES_HELP}`)
    .option('--allowed-ips <list>', `${IPS_HELP}, or none for any address`)
    .action(async (given: string, o: { name?: string; scopes?: string; allowedIps?: string }) => {
      const keyId = await checkKeyId(given, 'update');
      if (o.name === undefined && o.scopes === undefined && o.allowedIps === undefined)
        throw new DomainError('invalid_input', 'nothing to change: give --name, --scopes or --allowed-ips (none for any address)', {
          field: 'key-id',
        });
      const changes = {
        name: o.name,
        scopes: o.scopes === undefined ? undefined : (await scopes()).parseScopes(o.scopes, '--scopes'),
        allowedIps: o.allowedIps === undefined ? undefined : (await allowedIps()).parseAllowedIps(o.allowedIps, '--allowed-ips'),
      };
      const { keyStatus } = await apiKeys();
      const { announced, listed, followers, redis, iso } = await withRuntime(ctx, async (rt) => {
        const clinicId = await clinicOfKey(rt, keyId);
        const outcome = (await rt.keys.update(clinicId, keyId, changes))!;
        const listed = (await rt.keys.list(clinicId)).find((k) => k.id === keyId)!;
        const iso = await clinicTimes(rt, clinicId);
        return { announced: outcome.announced, listed, followers: outcome.followers, redis: rt.config.redisUrl !== null, iso };
      });
      const nowS = Math.floor(ctx.io.now() / 1000);
      const k = keyJson(listed, keyStatus(listed, nowS), iso);
      const from = k.allowed_ips === null ? 'any address' : `from ${k.allowed_ips.join(', ')} only`;
      info(
        ctx,
        `updated key ${keyId} "${k.name}": ${k.scopes.join(', ')}; ${from}` +
          `${followers.length ? `; so is the key it replaced, still in its overlap (${followers.join(', ')})` : ''}; ` +
          reach(announced, redis, 'use it'),
      );
      result(ctx, keyId, k);
    });

  keys
    .command('roll')
    .description('replace a key by a new one with the same name, scopes and addresses; prints the new key, once')
    .argument('<key-id>', 'the key id (the first column of keys list), not the key')
    .option('--overlap <time>', 'how long the old key keeps working: 0 to 7d, such as 0, 30m, 24h, 7d', '24h')
    .action(async (given: string, o: { overlap: string }) => {
      const keyId = await checkKeyId(given, 'roll');
      const overlap = overlapSeconds(o.overlap);
      const { rolled, redis, iso } = await withRuntime(ctx, async (rt) => {
        const clinicId = await clinicOfKey(rt, keyId);
        return {
          rolled: (await rt.keys.roll(clinicId, keyId, overlap, null))!,
          redis: rt.config.redisUrl !== null,
          iso: await clinicTimes(rt, clinicId),
        };
      });
      const { issued, oldExpiresAt } = rolled;
      info(
        ctx,
        `rolled key ${keyId} "${issued.name}": new key ${issued.id}${issued.expiresAt ? `, expires ${iso(issued.expiresAt)}` : ''}. ` +
          'Store it now: it cannot be shown again. ' +
          `The old key works until ${iso(oldExpiresAt)}; ${reach(rolled.announced, redis, 'know it')}.`,
      );
      result(ctx, issued.key, {
        ...issuedJson(issued, iso),
        replaces: keyId,
        old_expires_at: iso(oldExpiresAt),
      });
    });

  keys
    .command('revoke')
    .description('revoke a key by its id (from keys list)')
    .argument('<key-id>', 'the key id (the first column of keys list), not the key')
    .action(async (given: string) => {
      const keyId = await checkKeyId(given, 'revoke');
      const outcome = await withRuntime(ctx, async (rt) => {
        // The operator names a key, not a clinic: find its clinic first (operator-scoped), then
        // revoke it there, as every key query names its clinic.
        const clinicId = await clinicOfKey(rt, keyId);
        if ((await rt.keys.get(clinicId, keyId))!.revoked_at !== null) return { said: 'already', followers: [] } as const;
        // With REDIS_URL the revocation is announced to every running server (they evict it at once).
        const done = (await rt.keys.revokeEverywhere(clinicId, keyId))!;
        const said = done.announced ? 'announced' : rt.config.redisUrl !== null ? 'not-announced' : 'revoked';
        return { said, followers: done.followers } as const;
      });
      // The keys it replaced, still in their roll's overlap, are revoked with it (KeyService.revokeEverywhere).
      const what = outcome.followers.length
        ? `key ${keyId} and the key it replaced, still in its overlap (${outcome.followers.join(', ')})`
        : `key ${keyId}`;
      const them = outcome.followers.length ? 'them' : 'it';
      info(
        ctx,
        {
          already: `key ${keyId} was already revoked`,
          announced: `revoked ${what}; running servers reject ${them} now (announced through Redis)`,
          'not-announced':
            `revoked ${what}; Redis (REDIS_URL) did not answer, so running servers reject ${them} within 5 seconds, when ` +
            `their key cache expires`,
          revoked: `revoked ${what}; running servers reject ${them} within 5 seconds`,
        }[outcome.said],
      );
      result(ctx, keyId, { id: keyId, revoked: true, also_revoked: outcome.followers });
    });
}
