// clinic-api logs and clinic-api access: a clinic's request log and a clienta's access record
// (docs/operations.md, "The request log"), streamed to stdout as JSON lines or CSV, page by page
// (constant memory for any size), waiting for stdout when a pipe is slow. Every option is checked
// before anything is read; a bad one exits 2 naming it.
import type { Writable } from 'node:stream';
import type { Command } from 'commander';
import { DomainError } from '../errors.js';
import { modeClinic, withRuntime, type CliContext } from './io.js';

export type Format = 'jsonl' | 'csv';

export function format(raw: string): Format {
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

/**
 * Where the output goes, and whether its reader has gone: `clinic-api logs | head` closes the pipe
 * after a few lines, and the next write fails with EPIPE. That ends the command quietly (exit 0,
 * no stack trace), as `head` meant: the rest is not read from the database.
 */
export class Output {
  closed = false;
  private failed: Error | null = null;

  constructor(private readonly out: Writable) {
    // Kept for the rest of the run: a write already under way may still report EPIPE later.
    out.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code === 'EPIPE' || err.code === 'ERR_STREAM_DESTROYED') this.closed = true;
      else this.failed = err;
    });
  }

  /** Writes one line, waiting for the stream when it asks to (a slow pipe never fills memory). */
  async line(text: string): Promise<void> {
    if (this.failed) throw this.failed;
    if (this.closed) return;
    if (this.out.write(text)) return;
    await new Promise<void>((resolve) => {
      const done = () => {
        this.out.off('drain', done);
        this.out.off('close', done);
        this.out.off('error', done);
        resolve();
      };
      this.out.on('drain', done);
      this.out.on('close', done);
      this.out.on('error', done);
    });
  }
}

/**
 * Streams `rows` as JSON lines or CSV (a header row, then one row each: csv-stringify). The CSV is
 * for people to open: a cell that would start a formula (a user agent any key sets) is
 * neutralised, and a line break in a cell is quoted (../domain/csv-cells.ts).
 */
export async function emit(
  out: Output,
  fmt: Format,
  columns: readonly string[],
  rows: AsyncIterable<Record<string, unknown>>,
): Promise<number> {
  let n = 0;
  if (fmt === 'jsonl') {
    for await (const r of rows) {
      await out.line(`${JSON.stringify(r)}\n`);
      if (out.closed) break;
      n++;
    }
    return n;
  }
  const [{ stringify }, { AUDIT_CSV_OPTIONS }] = await Promise.all([import('csv-stringify/sync'), import('../domain/csv-cells.js')]);
  const cell = (v: unknown) => (v === null || v === undefined ? '' : v);
  await out.line(stringify([columns as string[]], AUDIT_CSV_OPTIONS));
  for await (const r of rows) {
    if (out.closed) break;
    await out.line(stringify([columns.map((c) => cell(r[c]))], AUDIT_CSV_OPTIONS));
    if (out.closed) break;
    n++;
  }
  return n;
}

interface LogsOptions {
  clinic: string;
  key?: string;
  app?: string;
  since?: string;
  until?: string;
  status?: string;
  requestId?: string;
  format: string;
  test?: boolean;
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
    .option('--request-id <id>', 'only the request with this id (X-Request-Id, or request_id in an error body)')
    .option('--format <format>', 'jsonl or csv', 'jsonl')
    .option('--test', "test mode's requests instead (test keys and apps connected in test mode, to the clinic's sandbox)")
    .action(async (o: LogsOptions) => {
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
      const requestId = o.requestId === undefined ? null : read.checkRequestId(o.requestId);
      const out = new Output(ctx.io.stdout);
      // A log entry's time: RFC 3339 with milliseconds and the clinic's UTC offset, as the API writes times.
      const { formatTimestampMs } = await import('../time.js');
      const n = await withRuntime(ctx, async (rt) => {
        const clinic = await requireClinic(rt.database.db, o.clinic);
        const sinceMs = o.since === undefined ? null : read.parseBound('since', o.since, clinic.timezone);
        const untilMs = o.until === undefined ? null : read.parseBound('until', o.until, clinic.timezone);
        if (sinceMs !== null && untilMs !== null && sinceMs >= untilMs)
          throw new DomainError('invalid_input', `--since (${o.since}) must be before --until (${o.until})`, { field: 'since' });
        const filter = { keyId: o.key ?? null, status, sinceMs, untilMs, requestId };
        // --app: the clinic's own apps only (another clinic's id is refused like an unknown one).
        const grantIds =
          o.app === undefined ? null : byApp.requireApp(byApp.appsOfGrants(await rt.appGrants.list(clinic.id)), o.app, clinic.id);
        // Test mode's requests are its sandbox's; none while it has no sandbox.
        const logClinicId = await modeClinic(rt, clinic.id, o.test);
        const rows = logClinicId === null ? emptyRows() : read.logEntries(rt.database.db, logClinicId, { ...filter, grantIds });
        return emit(
          out,
          fmt,
          LOG_COLUMNS,
          mapRows(rows, ({ id: _id, clinic_id: _c, at_ms, ...r }) => ({ time: formatTimestampMs(at_ms, clinic.timezone), ...r })),
        );
      });
      if (!out.closed) ctx.io.stderr.write(`${n} request${n === 1 ? '' : 's'}\n`);
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
      const out = new Output(ctx.io.stdout);
      // A log entry's time: RFC 3339 with milliseconds and the clinic's UTC offset, as the API writes times.
      const { formatTimestampMs } = await import('../time.js');
      const n = await withRuntime(ctx, async (rt) => {
        const clinic = await requireClinic(rt.database.db, o.clinic);
        // An erased clienta is no longer a clienta, but her access record stays and is printed.
        if (!(await read.isKnownClienta(rt.database.db, clinic.id, clientaId, ctx.io.now())))
          throw new DomainError(
            'not_found',
            `no clienta with id ${clientaId} in clinic ${clinic.id}, and no logged request disclosed one: ` +
              "check the id (the API's clientas list shows them)",
            { field: 'clienta' },
          );
        const rows = read.accessEntries(rt.database.db, clinic.id, clientaId);
        return emit(
          out,
          fmt,
          ACCESS_COLUMNS,
          mapRows(rows, ({ id: _id, at_ms, ...r }) => ({ time: formatTimestampMs(at_ms, clinic.timezone), ...r })),
        );
      });
      if (!out.closed) ctx.io.stderr.write(`${n} request${n === 1 ? '' : 's'}\n`);
    });
}

/** No rows: a generator that ends at once. */
async function* emptyRows(): AsyncGenerator<never> {}

async function* mapRows<T, U>(rows: AsyncIterable<T>, f: (r: T) => U): AsyncGenerator<U> {
  for await (const r of rows) yield f(r);
}
