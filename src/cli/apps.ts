// `clinic-api apps`: the apps a clinic connected with OAuth (Settings > API > Connected apps), and
// disconnecting one, for an operator: its tokens are removed and, with REDIS_URL, every running
// server refuses them at once (else within 5 seconds).
import type { Command } from 'commander';
import { DomainError } from '../errors.js';
import { info, isoIn, result, withRuntime, type CliContext } from './io.js';

export function registerAppCommands(program: Command, ctx: CliContext): void {
  const apps = program.command('apps').description('apps connected with OAuth (the grants clinic owners gave)');
  apps
    .command('list')
    .description("list a clinic's connected apps: grant id, state, app, scopes, who connected it, last use")
    .requiredOption('--clinic <id>', 'clinic id')
    .action(async (o: { clinic: string }) => {
      const [{ requireClinic }, { grantResourceKind }] = await Promise.all([
        import('../services/accounts.js'),
        import('../services/app-log.js'),
      ]);
      const { rows, iso } = await withRuntime(ctx, async (rt) => {
        const clinic = await requireClinic(rt.database.db, o.clinic);
        return { rows: await rt.appGrants.list(o.clinic), iso: await isoIn(clinic.timezone) };
      });
      const out = rows.map((g) => ({
        id: g.id,
        app: g.client_name,
        client_id: g.client_id,
        redirect_host: g.redirect_host,
        status: g.revoked_at === null ? 'active' : (g.revoked_reason ?? 'disconnected'),
        scopes: g.scopes.split(' ').filter(Boolean),
        resource: g.resource,
        mode: g.mode === 'test' ? 'test' : 'live',
        granted_by: g.granted_by_email,
        created_at: iso(g.created_at),
        last_used_at: iso(g.last_used_at),
        revoked_at: iso(g.revoked_at),
      }));
      result(
        ctx,
        // An app connected to the REST API and to the MCP server has a grant for each: the resource tells them apart.
        out
          .map((g) => {
            const app = `${g.app} (${grantResourceKind(g.resource) === 'mcp' ? 'MCP' : 'API'}${g.mode === 'test' ? ', test mode' : ''})`;
            return `${g.id}\t${g.status}\t${app}\t${g.scopes.join(',')}\tlast used ${g.last_used_at ?? 'never'}`;
          })
          .join('\n'),
        out,
      );
    });

  apps
    .command('revoke')
    .description('disconnect an app: revoke a grant by its id (from apps list) and every token of it')
    .argument('<grant-id>', 'the grant id (the first column of apps list)')
    .action(async (grantId: string) => {
      if (!/^[A-Za-z0-9_-]{1,100}$/.test(grantId))
        throw new DomainError('invalid_input', `"${grantId}" is not a grant id (clinic-api apps list --clinic CLINIC_ID shows them)`, {
          field: 'grant-id',
        });
      const outcome = await withRuntime(ctx, async (rt) => {
        // The operator names a grant, not a clinic: find its clinic first (operator-scoped), then act there.
        const clinicId = await rt.appGrants.locate(grantId);
        if (clinicId === undefined)
          throw new DomainError(
            'not_found',
            `no connected app with grant id ${grantId} (clinic-api apps list --clinic CLINIC_ID shows them)`,
            {
              field: 'grant-id',
            },
          );
        const done = await rt.appGrants.disconnect(clinicId, grantId);
        if (!done?.revoked) return 'already';
        return done.announced ? 'announced' : rt.config.redisUrl !== null ? 'not-announced' : 'revoked';
      });
      info(
        ctx,
        {
          already: `grant ${grantId} was already revoked`,
          announced: `revoked grant ${grantId}; running servers reject its tokens now (announced through Redis)`,
          'not-announced':
            `revoked grant ${grantId}; Redis (REDIS_URL) did not answer, ` + 'so running servers reject its tokens within 5 seconds',
          revoked: `revoked grant ${grantId}; running servers reject its tokens within 5 seconds`,
        }[outcome],
      );
      result(ctx, grantId, { id: grantId, revoked: true });
    });
}
