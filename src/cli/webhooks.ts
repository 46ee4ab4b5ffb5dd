// clinic-api webhooks create|list|delete|test|enable|disable|deliveries|resend|replay: the
// operator's side of Settings > API > Webhooks. The CLI never delivers events (the server's worker
// does); `test` and `resend` send one request now and print how the receiver answered; `replay`
// queues events for the server's replayer; `deliveries` streams the delivery log. Test endpoints
// live in the clinic's sandbox (a clinic row of its own): the commands that take --clinic reach
// them with --test; those that take an endpoint id find it in either.
import type { Command } from 'commander';
import { DomainError } from '../errors.js';
import type { Runtime } from '../runtime.js';
import type { Attempt } from '../services/webhooks/send.js';
import { info, isoIn, modeClinic, result, withRuntime, type CliContext } from './io.js';

// Loaded when a command runs, never for --help (cli/main.ts).
const endpoints = () => import('../services/webhooks/endpoints.js');

/** The clinic of endpoint `id`, or exit 2 naming it. */
async function locate(rt: Runtime, id: string): Promise<string> {
  const clinicId = await rt.webhooks.locate(id);
  if (clinicId === undefined) {
    throw new DomainError(
      'not_found',
      `no webhook endpoint with id ${id} (clinic-api webhooks list --clinic CLINIC_ID [--test] shows the ids)`,
      {
        field: 'endpoint-id',
      },
    );
  }
  return clinicId;
}

const TEST_OPTION = "the clinic's test endpoints (its sandbox's, receiving sandbox events) instead of its live ones";

/** As modeClinic, for a command that needs an endpoint or delivery there: with no sandbox yet, there is none. */
async function requireModeClinic(rt: Runtime, clinicId: string, test: boolean | undefined): Promise<string> {
  const id = await modeClinic(rt, clinicId, test);
  if (id === null) {
    // An unknown clinic is named as such, not as one without a sandbox.
    const { requireClinic } = await import('../services/accounts.js');
    await requireClinic(rt.database.db, clinicId);
    throw new DomainError('not_found', `clinic ${clinicId} has no sandbox yet: its first test key or test endpoint makes one`, {
      field: 'test',
    });
  }
  return id;
}

/**
 * A live lookup (no --test) that found nothing may have been meant for the sandbox: the refusal
 * says how to reach it, as each command that takes --clinic and an id does.
 */
const testHint = (test: boolean | undefined, whose: string) => (test ? '' : ` (${whose}: add --test)`);

/** `lookup`, its not_found refusal with testHint's words. */
function hintTest<T>(test: boolean | undefined, whose: string, lookup: Promise<T>): Promise<T> {
  return lookup.catch((err: unknown) => {
    if (err instanceof DomainError && err.reason === 'not_found')
      throw new DomainError('not_found', err.message + testHint(test, whose), err.details);
    throw err;
  });
}

function describeAttempt(a: Attempt): string {
  const how = a.statusCode !== null ? `HTTP ${a.statusCode}` : (a.error ?? 'error');
  return `${a.ok ? 'delivered' : 'failed'}: ${how} in ${a.durationMs} ms`;
}

/** `list`'s last column: why an endpoint is disabled, or since when it fails. */
function stateNote(e: { disabled_reason: string | null; last_error: string | null; failing_since: string | null }): string {
  switch (e.disabled_reason) {
    case 'failing':
      return `disabled after 3 days of failures (last: ${e.last_error ?? '?'})`;
    case 'manual':
      return 'disabled by hand';
    case 'key_revoked':
      return 'disabled: the API key that subscribed it was revoked';
    case 'key_expired':
      return 'disabled: the API key that subscribed it expired';
    case 'grant_revoked':
      return 'disabled: the app that subscribed it was disconnected';
  }
  return e.last_error ? `failing since ${e.failing_since} (last: ${e.last_error})` : '';
}

/** The delivery log's columns, as `deliveries` prints them. */
const DELIVERY_COLUMNS = [
  'time',
  'id',
  'endpoint_id',
  'event_id',
  'tipo',
  'kind',
  'attempt',
  'outcome',
  'status_code',
  'error',
  'duration_ms',
  'next_retry_at',
  'response',
] as const;
const PAGE = 500;

export function registerWebhookCommands(program: Command, ctx: CliContext): void {
  const wh = program.command('webhooks').description("manage a clinic's webhook endpoints (docs/webhooks.md)");

  wh.command('create')
    .description('create an endpoint; prints its id, then its signing secret (shown once)')
    .requiredOption('--clinic <id>', 'clinic id')
    .requiredOption('--url <url>', 'where to POST events: an https:// URL (http:// and private addresses with WEBHOOK_ALLOW_PRIVATE=true)')
    .option('--events <types>', 'comma-separated event types, e.g. cita.creada,cita.actualizada (default: all)')
    .option('--test', "a test endpoint: it receives the clinic's sandbox events only (the sandbox is made if it has none)")
    .action(async (o: { clinic: string; url: string; events?: string; test?: boolean }) => {
      const created = await withRuntime(ctx, async (rt) =>
        rt.webhooks.create({
          // A test endpoint lives in the sandbox, made here on first use (as by the first test key).
          clinicId: o.test ? await rt.sandboxes.ensure(o.clinic) : o.clinic,
          url: o.url,
          eventTypes: o.events === undefined ? null : o.events.split(','),
          createdBy: null,
        }),
      );
      const e = created.endpoint;
      const types = e.event_types;
      info(
        ctx,
        `created ${o.test ? 'test ' : ''}webhook endpoint ${e.id} for ${e.url} (${types ? types.join(', ') : 'all event types'}); ` +
          `it receives ${o.test ? "the sandbox's " : ''}events from now on. Store the secret now: it cannot be shown again.`,
      );
      result(ctx, `${e.id}\n${created.secret}`, { id: e.id, secret: created.secret, url: e.url, events: types, clinic_id: e.clinic_id });
    });

  wh.command('list')
    .description("list a clinic's endpoints: id, status, URL, event types, last error")
    .requiredOption('--clinic <id>', 'clinic id')
    .option('--test', TEST_OPTION)
    .action(async (o: { clinic: string; test?: boolean }) => {
      const [{ requireClinic }, { endpointStatus }] = await Promise.all([import('../services/accounts.js'), endpoints()]);
      const { rows, iso } = await withRuntime(ctx, async (rt) => {
        const clinic = await requireClinic(rt.database.db, o.clinic);
        const listed = await modeClinic(rt, clinic.id, o.test);
        return { rows: listed === null ? [] : await rt.webhooks.list(listed), iso: await isoIn(clinic.timezone) };
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
        out.map((e) => [e.id, e.status, e.url, e.events ? e.events.join(',') : 'all', stateNote(e)].join('\t').trimEnd()).join('\n'),
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

  wh.command('deliveries')
    .description("stream a clinic's delivery log, oldest first: every attempt kept (WEBHOOK_LOG_DAYS), as JSON lines or CSV")
    .requiredOption('--clinic <id>', 'clinic id')
    .option('--endpoint <id>', "one endpoint's attempts only")
    .option('--failed', 'failed attempts only')
    .option('--since <date>', "from this date (YYYY-MM-DD, the clinic's time zone) or timestamp with offset")
    .option('--format <format>', 'jsonl or csv', 'jsonl')
    .option('--test', TEST_OPTION)
    .action(async (o: { clinic: string; endpoint?: string; failed?: boolean; since?: string; format: string; test?: boolean }) => {
      const [{ format, Output, emit }, { requireClinic }, read, { formatTimestampMs }] = await Promise.all([
        import('./logs.js'),
        import('../services/accounts.js'),
        import('../services/request-log-read.js'),
        import('../time.js'),
      ]);
      const fmt = format(o.format);
      const out = new Output(ctx.io.stdout);
      const n = await withRuntime(ctx, async (rt) => {
        const clinic = await requireClinic(rt.database.db, o.clinic);
        const sinceMs = o.since === undefined ? undefined : read.parseBound('since', o.since, clinic.timezone);
        const logged = await modeClinic(rt, clinic.id, o.test);
        if (o.endpoint !== undefined && (logged === null || !(await rt.webhooks.get(logged, o.endpoint))))
          throw new DomainError(
            'not_found',
            `no ${o.test ? 'test ' : ''}webhook endpoint with id ${o.endpoint} in clinic ${clinic.id}` +
              testHint(o.test, 'a test endpoint'),
            { field: 'endpoint' },
          );
        const time = (ms: number | null) => (ms === null ? null : formatTimestampMs(ms, clinic.timezone));
        // Page by page (constant memory), each page after the last one's (time, id).
        async function* rows() {
          if (logged === null) return;
          let after: { atMs: number; id: string } | undefined;
          for (;;) {
            const page = await rt.webhooks.deliveryLog({
              clinicId: logged,
              endpointId: o.endpoint,
              outcome: o.failed ? 'failed' : undefined,
              sinceMs,
              order: 'asc',
              after,
              limit: PAGE,
            });
            for (const d of page)
              yield {
                time: time(d.at_ms),
                id: d.id,
                endpoint_id: d.endpoint_id,
                event_id: d.event_id,
                tipo: d.tipo,
                kind: d.kind,
                attempt: d.attempt,
                outcome: d.outcome,
                status_code: d.status_code,
                error: d.error,
                duration_ms: d.duration_ms,
                next_retry_at: time(d.next_retry_ms),
                response: d.response_excerpt,
              };
            const last = page.at(-1);
            if (!last || page.length < PAGE || out.closed) return;
            after = { atMs: last.at_ms, id: last.id };
          }
        }
        return emit(out, fmt, DELIVERY_COLUMNS, rows());
      });
      if (!out.closed) ctx.io.stderr.write(`${n} attempt${n === 1 ? '' : 's'}\n`);
    });

  wh.command('resend')
    .description('send the event of one logged attempt again now, with the same webhook-id; prints how it was answered (exit 1 if not)')
    .requiredOption('--clinic <id>', 'clinic id')
    .argument('<delivery-id>', 'the attempt id (from webhooks deliveries)')
    .option('--test', 'an attempt of a test endpoint (from webhooks deliveries --test)')
    .action(async (deliveryId: string, o: { clinic: string; test?: boolean }) => {
      const a = await withRuntime(ctx, async (rt) =>
        hintTest(o.test, "a test endpoint's", rt.webhooks.resend(await requireModeClinic(rt, o.clinic, o.test), deliveryId)),
      );
      result(ctx, describeAttempt(a), {
        id: deliveryId,
        delivered: a.ok,
        status_code: a.statusCode,
        error: a.error,
        duration_ms: a.durationMs,
      });
      if (!a.ok)
        throw new DomainError(
          'rejected',
          `the endpoint did not accept the event (${a.statusCode !== null ? `HTTP ${a.statusCode}` : a.error})`,
        );
    });

  wh.command('replay')
    .description(
      'send again every event of an endpoint whose attempts since a time all failed, once each, in event order, with the same ' +
        'webhook-id; the server sends them beside the live deliveries',
    )
    .requiredOption('--clinic <id>', 'clinic id')
    .requiredOption('--endpoint <id>', 'the endpoint id (from webhooks list)')
    .requiredOption('--since <date>', "from this date (YYYY-MM-DD, the clinic's time zone) or timestamp with offset")
    .option('--test', 'a test endpoint (from webhooks list --test)')
    .action(async (o: { clinic: string; endpoint: string; since: string; test?: boolean }) => {
      const [{ requireClinic }, read] = await Promise.all([import('../services/accounts.js'), import('../services/request-log-read.js')]);
      const n = await withRuntime(ctx, async (rt) => {
        const clinic = await requireClinic(rt.database.db, o.clinic);
        const sinceMs = read.parseBound('since', o.since, clinic.timezone);
        return hintTest(o.test, 'a test endpoint', rt.webhooks.replay(await requireModeClinic(rt, clinic.id, o.test), o.endpoint, sinceMs));
      });
      info(
        ctx,
        `queued ${n} event${n === 1 ? '' : 's'} to send again; a running server sends them in order (webhooks deliveries shows each)`,
      );
      result(ctx, String(n), { endpoint: o.endpoint, queued: n });
    });
}
