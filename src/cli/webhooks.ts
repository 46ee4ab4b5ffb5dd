// clinic-api webhooks create|list|delete|test|enable|disable: the operator's side of Settings >
// API > Webhooks. The CLI never delivers events (the server's worker does); `test` sends one
// ping now and prints how the receiver answered.
import type { Command } from 'commander';
import { DomainError } from '../errors.js';
import type { Runtime } from '../runtime.js';
import type { Attempt } from '../services/webhooks/send.js';
import { info, isoIn, result, withRuntime, type CliContext } from './io.js';

// Loaded when a command runs, never for --help (cli/main.ts).
const endpoints = () => import('../services/webhooks/endpoints.js');

/** The clinic of endpoint `id`, or exit 2 naming it. */
async function locate(rt: Runtime, id: string): Promise<string> {
  const clinicId = await rt.webhooks.locate(id);
  if (clinicId === undefined) {
    throw new DomainError('not_found', `no webhook endpoint with id ${id} (clinic-api webhooks list --clinic CLINIC_ID shows the ids)`, {
      field: 'endpoint-id',
    });
  }
  return clinicId;
}

function describeAttempt(a: Attempt): string {
  const how = a.statusCode !== null ? `HTTP ${a.statusCode}` : (a.error ?? 'error');
  return `${a.ok ? 'delivered' : 'failed'}: ${how} in ${a.durationMs} ms`;
}

export function registerWebhookCommands(program: Command, ctx: CliContext): void {
  const wh = program.command('webhooks').description("manage a clinic's webhook endpoints (docs/webhooks.md)");

  wh.command('create')
    .description('create an endpoint; prints its id, then its signing secret (shown once)')
    .requiredOption('--clinic <id>', 'clinic id')
    .requiredOption('--url <url>', 'where to POST events: an https:// URL (http:// and private addresses with WEBHOOK_ALLOW_PRIVATE=true)')
    .option('--events <types>', 'comma-separated event types, e.g. cita.creada,cita.actualizada (default: all)')
    .action(async (o: { clinic: string; url: string; events?: string }) => {
      const created = await withRuntime(ctx, (rt) =>
        rt.webhooks.create({
          clinicId: o.clinic,
          url: o.url,
          eventTypes: o.events === undefined ? null : o.events.split(','),
          createdBy: null,
        }),
      );
      const e = created.endpoint;
      const types = e.event_types;
      info(
        ctx,
        `created webhook endpoint ${e.id} for ${e.url} (${types ? types.join(', ') : 'all event types'}); it receives events from now ` +
          `on. Store the secret now: it cannot be shown again.`,
      );
      result(ctx, `${e.id}\n${created.secret}`, { id: e.id, secret: created.secret, url: e.url, events: types, clinic_id: e.clinic_id });
    });

  wh.command('list')
    .description("list a clinic's endpoints: id, status, URL, event types, last error")
    .requiredOption('--clinic <id>', 'clinic id')
    .action(async (o: { clinic: string }) => {
      const [{ requireClinic }, { endpointStatus }] = await Promise.all([import('../services/accounts.js'), endpoints()]);
      const { rows, iso } = await withRuntime(ctx, async (rt) => {
        const clinic = await requireClinic(rt.database.db, o.clinic);
        return { rows: await rt.webhooks.list(o.clinic), iso: await isoIn(clinic.timezone) };
      });
      const out = rows.map((e) => ({
        id: e.id,
        status: endpointStatus(e),
        url: e.url,
        events: e.event_types,
        created_at: iso(e.created_at),
        disabled_reason: e.disabled_reason,
        disabled_at: iso(e.disabled_at),
        last_error: e.last_error,
        failing_since: e.failing_since_ms === null ? null : iso(Math.floor(e.failing_since_ms / 1000)),
      }));
      result(
        ctx,
        out
          .map((e) =>
            [
              e.id,
              e.status,
              e.url,
              e.events ? e.events.join(',') : 'all',
              e.disabled_reason === 'failing'
                ? `disabled after 3 days of failures (last: ${e.last_error ?? '?'})`
                : e.disabled_reason === 'manual'
                  ? 'disabled by hand'
                  : e.last_error
                    ? `failing since ${e.failing_since} (last: ${e.last_error})`
                    : '',
            ]
              .join('\t')
              .trimEnd(),
          )
          .join('\n'),
        out,
      );
    });

  wh.command('delete')
    .description('delete an endpoint (its pending deliveries are dropped)')
    .argument('<endpoint-id>', 'the endpoint id (from webhooks list)')
    .action(async (id: string) => {
      await withRuntime(ctx, async (rt) => rt.webhooks.delete(await locate(rt, id), id));
      info(ctx, `deleted webhook endpoint ${id}`);
      result(ctx, id, { id, deleted: true });
    });

  for (const [name, enabled] of [
    ['enable', true],
    ['disable', false],
  ] as const) {
    wh.command(name)
      .description(
        enabled
          ? 'enable an endpoint again: it resumes where it stopped (events since are delivered)'
          : 'stop delivering to an endpoint (events wait; enable resumes)',
      )
      .argument('<endpoint-id>', 'the endpoint id (from webhooks list)')
      .action(async (id: string) => {
        await withRuntime(ctx, async (rt) => rt.webhooks.setEnabled(await locate(rt, id), id, enabled));
        info(ctx, `${enabled ? 'enabled' : 'disabled'} webhook endpoint ${id}`);
        result(ctx, id, { id, enabled });
      });
  }

  wh.command('test')
    .description('send a ping event to an endpoint now and print how it answered (exit 1 if it did not accept it)')
    .argument('<endpoint-id>', 'the endpoint id (from webhooks list)')
    .action(async (id: string) => {
      const a = await withRuntime(ctx, async (rt) => rt.webhooks.sendTest(await locate(rt, id), id));
      result(ctx, describeAttempt(a), { id, delivered: a.ok, status_code: a.statusCode, error: a.error, duration_ms: a.durationMs });
      if (!a.ok) {
        // refused_address is this process's own refusal: it reads WEBHOOK_ALLOW_PRIVATE from its own environment, not the server's.
        const { ALLOW_PRIVATE_HINT } = await import('../services/webhooks/destination.js');
        const why = a.error === 'refused_address' ? `: this command refused the address; ${ALLOW_PRIVATE_HINT}` : '; see docs/webhooks.md';
        throw new DomainError(
          'rejected',
          `the endpoint did not accept the test event (${a.statusCode !== null ? `HTTP ${a.statusCode}` : a.error})${why}`,
        );
      }
    });
}
