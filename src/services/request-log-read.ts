// Reading a clinic's request log and a clienta's access record for the CLI and the dashboard:
// the options checked (pure), and the entries streamed page by page (keyset pages of the indexes
// (clinic_id, at_ms, id) and (clienta, log_id)), so any size takes constant memory.
import type { Kysely } from 'kysely';
import type { DB } from '../db/schema.js';
import { REQUEST_ID_RE, UUID_RE } from '../domain/records.js';
import { DomainError } from '../errors.js';
import { clientasByIds, type ClientaRow } from '../repos/clientas.js';
import {
  accessOfEntry,
  accessPage,
  logPage,
  type AccessRow,
  type LogCursor,
  type LogFilter,
  type StoredRequestLogRow,
} from '../repos/request-log.js';
import type { ClientasSearch } from './clientas-search/search.js';
import { normalizeName } from '../domain/normalize.js';
import { addDays, dayStart, isValidDate, parseTimestamp } from '../time.js';

export type { AccessRow, LogCursor, LogFilter, StoredRequestLogRow };

const PAGE = 1_000;

function invalid(field: string, message: string): DomainError {
  return new DomainError('invalid_input', message, { field });
}

/** `4xx` (a class) or `404` (one status). */
export function parseStatusFilter(raw: string): LogFilter['status'] {
  const cls = /^([1-5])xx$/i.exec(raw);
  if (cls) return { class: Number(cls[1]) };
  if (/^[1-5]\d\d$/.test(raw)) return { exact: Number(raw) };
  throw invalid('status', `--status must be a status class (2xx, 3xx, 4xx, 5xx) or a status (e.g. 404), got "${raw}"`);
}

/**
 * A bound of --since/--until: a date (YYYY-MM-DD, a whole day in the clinic's time zone: --since
 * from its start, --until through its end) or a timestamp with its offset (RFC 3339).
 */
export function parseBound(name: 'since' | 'until', raw: string, timezone: string): number {
  if (/^\d{4}-\d{2}-\d{2}$/.test(raw)) {
    if (!isValidDate(raw)) throw invalid(name, `--${name} is not a calendar date: "${raw}"`);
    return dayStart(name === 'since' ? raw : addDays(raw, 1), timezone) * 1000;
  }
  const s = parseTimestamp(raw);
  if (s === null)
    throw invalid(
      name,
      `--${name} must be a date (2026-03-28, in the clinic's time zone) ` +
        `or a timestamp with its offset (2026-03-28T09:00:00+01:00), got "${raw}"`,
    );
  return s * 1000;
}

/** A request id as the API sends it (X-Request-Id, an error's request_id). */
export function checkRequestId(raw: string): string {
  if (!REQUEST_ID_RE.test(raw))
    throw invalid(
      'request-id',
      `--request-id must be a request id as the API sent it (X-Request-Id, or request_id in an error body), got "${raw}"`,
    );
  return raw;
}

/** A clienta's id; `given` names where it was given (an option, or a command's argument). */
export function checkClientaId(raw: string, given = '--clienta'): string {
  if (!UUID_RE.test(raw))
    throw invalid('clienta', `${given} must be a clienta's id (a UUID, as the API and the import show it), got "${raw}"`);
  return raw.toLowerCase();
}

/** The clinic's entries matching `f`, oldest first, a page at a time. */
export async function* logEntries(db: Kysely<DB>, clinicId: string, f: LogFilter): AsyncGenerator<StoredRequestLogRow> {
  let after: { atMs: number; id: number } | null = null;
  for (;;) {
    const rows = await logPage(db, clinicId, f, after, PAGE, 'asc');
    yield* rows;
    if (rows.length < PAGE) return;
    const last = rows[rows.length - 1]!;
    after = { atMs: last.at_ms, id: last.id };
  }
}

/** Every request of the clinic that disclosed the clienta's data, newest first, a page at a time. */
export async function* accessEntries(db: Kysely<DB>, clinicId: string, clientaId: string): AsyncGenerator<AccessRow> {
  let after: number | null = null;
  for (;;) {
    const rows = await accessPage(db, clinicId, clientaId, after, PAGE);
    yield* rows;
    if (rows.length < PAGE) return;
    after = rows[rows.length - 1]!.id;
  }
}

// The dashboard's pages (Settings > API > Logs): a page at a time, newest first, the caller's
// clinic in every query (another clinic's log id is simply not found).

/** A page of the clinic's log, newest first, after `cursor` (the last row of the page before). */
export function recentRequests(db: Kysely<DB>, clinicId: string, f: LogFilter, cursor: LogCursor | null, limit: number) {
  return logPage(db, clinicId, f, cursor, limit, 'desc');
}

/**
 * The clinic's logged requests with this request id, newest first, at most `limit`, each with the
 * clientas it disclosed: usually one (a client may send, and reuse, its own X-Request-Id). Another
 * clinic's requests are simply not found.
 */
export async function requestsById(
  db: Kysely<DB>,
  clinicId: string,
  requestId: string,
  limit: number,
): Promise<{ entry: StoredRequestLogRow; clientas: string[] }[]> {
  const entries = await logPage(db, clinicId, { requestId }, null, limit, 'desc');
  return Promise.all(entries.map(async (entry) => ({ entry, clientas: (await accessOfEntry(db, clinicId, entry.id)).sort() })));
}

/** A page of the requests that disclosed the clienta, newest first, after log id `afterId`. */
export function clientaAccessPage(db: Kysely<DB>, clinicId: string, clientaId: string, afterId: number | null, limit: number) {
  return accessPage(db, clinicId, clientaId, afterId, limit);
}

/** The clinic's clientas whose name holds `name` (the API's client search), at most `limit`, by name. */
export async function findClientas(
  db: Kysely<DB>,
  search: ClientasSearch,
  clinicId: string,
  name: string,
  limit: number,
  nowMs: number,
): Promise<{ rows: Pick<ClientaRow, 'id' | 'nombre'>[]; total: number }> {
  const nameLike = normalizeName(name.trim());
  if (nameLike === '') return { rows: [], total: 0 };
  const page = await search.page(db, clinicId, { nameLike, digitsLike: null, vip: null }, limit, 0, Math.floor(nowMs / 1000));
  return { rows: page.rows.map((r) => ({ id: r.id, nombre: r.nombre })), total: page.total };
}

/** The clienta's name, or null when the clinic has no such clienta (erased: her access record stays, by id). */
export async function clientaName(db: Kysely<DB>, clinicId: string, clientaId: string, nowMs: number): Promise<string | null> {
  const [row] = await clientasByIds(db, clinicId, [clientaId], Math.floor(nowMs / 1000));
  return row?.nombre ?? null;
}

/**
 * Whether `clientaId` names a clienta of the clinic, or one whose access record still holds
 * entries (erased since: who read her data stays answerable): else the id is unknown.
 */
export async function isKnownClienta(db: Kysely<DB>, clinicId: string, clientaId: string, nowMs: number): Promise<boolean> {
  if ((await clientaName(db, clinicId, clientaId, nowMs)) !== null) return true;
  return (await accessPage(db, clinicId, clientaId, null, 1)).length > 0;
}
