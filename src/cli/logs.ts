// clinic-api logs and clinic-api access: a clinic's request log and a clienta's access record
// (docs/operations.md, "The request log"), streamed to stdout as JSON lines or CSV, page by page
// (constant memory for any size), waiting for stdout when a pipe is slow. Every option is checked
// before anything is read; a bad one exits 2 naming it.
import type { Writable } from 'node:stream';
import type { Command } from 'commander';
import { DomainError } from '../errors.js';
import { withRuntime, type CliContext } from './io.js';

type Format = 'jsonl' | 'csv';

function format(raw: string): Format {
  if (raw === 'jsonl' || raw === 'csv') return raw;
  throw new DomainError('invalid_input', `--format must be jsonl or csv, got "${raw}"`, { field: 'format' });
}

const LOG_COLUMNS = [
  'time',
  'request_id',
  'key_id',
  'grant_id',
  'method',
  'path',
  'query',
  'status',
  'error_code',
  'duration_ms',
  'records',
  'client_ip',
  'user_agent',
  'error_body',
] as const;
const ACCESS_COLUMNS = ['time', 'request_id', 'key_id', 'grant_id', 'method', 'path', 'query', 'status'] as const;

const isoMs = (ms: number) => new Date(ms).toISOString();

/** Writes one line, waiting for the stream when it asks to (a slow pipe never fills memory). */
async function writeLine(out: Writable, line: string): Promise<void> {
  if (!out.write(line)) await new Promise<void>((resolve) => out.once('drain', resolve));
}

/** Streams `rows` as JSON lines or CSV (a header row, then one row each: csv-stringify). */
async function emit(out: Writable, fmt: Format, columns: readonly string[], rows: AsyncIterable<Record<string, unknown>>): Promise<number> {
  let n = 0;
  if (fmt === 'jsonl') {
    for await (const r of rows) {
      await writeLine(out, `${JSON.stringify(r)}\n`);
      n++;
    }
    return n;
  }
  const { stringify } = await import('csv-stringify/sync');
  const cell = (v: unknown) => (v === null || v === undefined ? '' : v);
  await writeLine(out, stringify([columns as string[]], { record_delimiter: 'windows' }));
  for await (const r of rows) {
    await writeLine(out, stringify([columns.map((c) => cell(r[c]))], { record_delimiter: 'windows' }));
    n++;
  }
  return n;
}

export function registerLogCommands(program: Command, ctx: CliContext): void {
  program
    .command('logs')
    .description("a clinic's request log (every API request made with its keys), oldest first, as JSON lines or CSV")
    .requiredOption('--clinic <id>', 'clinic id')
    .option('--key <key-id>', "only this key's requests (its id, as keys list shows it)")
    .option(
      '--app <grant-or-client-id>',
      "only this OAuth app's requests: a client id (every grant of the app) or one grant id, as apps list --json shows them",
    )
    .option('--since <date>', "from this date (YYYY-MM-DD, the clinic's time zone) or timestamp with offset")
    .option('--until <date>', 'through this date, or before this timestamp')
    .option('--status <status>', 'a status class (2xx, 4xx, 5xx ...) or one status (404)')
    .option('--format <format>', 'jsonl or csv', 'jsonl')
    .action(async (o: { clinic: string; key?: string; app?: string; since?: string; until?: string; status?: string; format: string }) => {
      const fmt = format(o.format);
      if (o.key !== undefined && o.app !== undefined)
        throw new DomainError('invalid_input', '--key and --app exclude each other: a request is made with a key or by an app', {
          field: 'app',
        });
      const [{ requireClinic }, read, byApp] = await Promise.all([
        import('../services/accounts.js'),
        import('../services/request-log-read.js'),
        import('../services/app-log.js'),
      ]);
      const status = o.status === undefined ? null : read.parseStatusFilter(o.status);
      const n = await withRuntime(ctx, async (rt) => {
        const clinic = await requireClinic(rt.database.db, o.clinic);
        const sinceMs = o.since === undefined ? null : read.parseBound('since', o.since, clinic.timezone);
        const untilMs = o.until === undefined ? null : read.parseBound('until', o.until, clinic.timezone);
        if (sinceMs !== null && untilMs !== null && sinceMs >= untilMs)
          throw new DomainError('invalid_input', `--since (${o.since}) must be before --until (${o.until})`, { field: 'since' });
        const filter = { keyId: o.key ?? null, status, sinceMs, untilMs };
        // --app: the clinic's own apps only (another clinic's id is refused like an unknown one).
        const grantIds =
          o.app === undefined ? null : byApp.requireApp(byApp.appsOfGrants(await rt.appGrants.list(clinic.id)), o.app, clinic.id);
        const rows = read.logEntries(rt.database.db, clinic.id, { ...filter, grantIds });
        return emit(
          ctx.io.stdout,
          fmt,
          LOG_COLUMNS,
          mapRows(rows, ({ id: _id, clinic_id: _c, at_ms, ...r }) => ({ time: isoMs(at_ms), ...r })),
        );
      });
      ctx.io.stderr.write(`${n} request${n === 1 ? '' : 's'}\n`);
    });

  program
    .command('access')
    .description("a clienta's access record: every logged request whose response disclosed her data, newest first")
    .requiredOption('--clinic <id>', 'clinic id')
    .requiredOption('--clienta <id>', "the clienta's id (a UUID)")
    .option('--format <format>', 'jsonl or csv', 'jsonl')
    .action(async (o: { clinic: string; clienta: string; format: string }) => {
      const fmt = format(o.format);
      const [{ requireClinic }, read] = await Promise.all([import('../services/accounts.js'), import('../services/request-log-read.js')]);
      const clientaId = read.checkClientaId(o.clienta);
      const n = await withRuntime(ctx, async (rt) => {
        const clinic = await requireClinic(rt.database.db, o.clinic);
        const rows = read.accessEntries(rt.database.db, clinic.id, clientaId);
        return emit(
          ctx.io.stdout,
          fmt,
          ACCESS_COLUMNS,
          mapRows(rows, ({ id: _id, at_ms, ...r }) => ({ time: isoMs(at_ms), ...r })),
        );
      });
      ctx.io.stderr.write(`${n} request${n === 1 ? '' : 's'}\n`);
    });
}

async function* mapRows<T, U>(rows: AsyncIterable<T>, f: (r: T) => U): AsyncGenerator<U> {
  for await (const r of rows) yield f(r);
}
