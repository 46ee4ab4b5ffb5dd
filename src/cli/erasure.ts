// Erasure commands: `clientas erase` (one client's personal data, GDPR art. 17) and `clinics
// delete` (a whole clinic). Both print what they removed, per kind or per table (--json too).
import type { Command } from 'commander';
import { info, result, withRuntime, type CliContext } from './io.js';

/** An erasure scans the clinic's events for her phones: like an import, without the API's statement timeout. */
function withoutStatementTimeout(ctx: CliContext): CliContext {
  return { ...ctx, config: async () => ({ ...(await ctx.config()), dbStatementTimeoutMs: 0 }) };
}

export function registerErasureCommands(program: Command, outer: CliContext): void {
  const ctx = withoutStatementTimeout(outer);
  const clientas = program.command('clientas').description("a clinic's clients");
  clientas
    .command('erase')
    .description("erase a client's personal data (GDPR art. 17): her records, and her data in past events, webhook deliveries and caches")
    .requiredOption('--clinic <id>', 'clinic id')
    .argument('<clienta-id>', 'the clienta\'s id (her "id" in the API)')
    .action(async (clientaId: string, o: { clinic: string }) => {
      const { eraseClienta } = await import('../services/erasure.js');
      const r = await withRuntime(ctx, (rt) => eraseClienta(rt.database, o.clinic, clientaId, { now: ctx.io.now }));
      const json = {
        clinic_id: o.clinic,
        clienta_id: clientaId,
        changed: r.changed,
        deleted: r.deleted,
        events_scrubbed: r.eventsScrubbed,
        pending_deliveries_scrubbed: r.pendingDeliveries,
      };
      if (!r.changed) {
        info(ctx, `nothing left to erase: clienta ${clientaId} has no record and no personal data in the clinic's events`);
        result(ctx, 'nothing left to erase', json);
        return;
      }
      info(ctx, `erased clienta ${clientaId}; every instance's caches are bypassed from now (the clinic's data version moved)`);
      result(
        ctx,
        [
          ...Object.entries(r.deleted).map(([name, n]) => `${name} deleted: ${n}`),
          `events scrubbed: ${r.eventsScrubbed}`,
          `pending webhook deliveries scrubbed: ${r.pendingDeliveries}`,
        ].join('\n'),
        json,
      );
    });
}

/** `clinics delete`, on the `clinics` command of accounts.ts. */
export function registerClinicDelete(clinics: Command, ctx: CliContext): void {
  clinics
    .command('delete')
    .description(
      'delete a clinic and every row of it (records, events, keys, users, webhooks, usage); its keys are refused everywhere within 5 s',
    )
    .argument('<clinic-id>', 'the clinic id (from clinics list)')
    .requiredOption('--confirm <name>', "the clinic's name, exactly (as clinics list shows it)")
    .action(async (clinicId: string, o: { confirm: string }) => {
      const { deleteClinic } = await import('../services/clinic-deletion.js');
      const { d, redis } = await withRuntime(ctx, async (rt) => ({
        d: await deleteClinic(rt.database, rt.keys, clinicId, o.confirm),
        redis: rt.config.redisUrl !== null,
      }));
      const when = d.announced
        ? 'running servers refuse its keys now (announced through Redis)'
        : redis
          ? 'Redis (REDIS_URL) did not answer, so running servers refuse its keys within 5 seconds, when their key cache expires'
          : 'running servers refuse its keys within 5 seconds, when their key cache (4 s) expires';
      info(ctx, `deleted clinic "${d.name}" (${clinicId}) with ${d.keys} API key(s); ${when}`);
      const rows = Object.entries(d.rows).filter(([, n]) => n > 0);
      result(ctx, rows.map(([table, n]) => `${table}: ${n}`).join('\n'), {
        id: clinicId,
        name: d.name,
        announced: d.announced,
        rows: d.rows,
      });
    });
}
