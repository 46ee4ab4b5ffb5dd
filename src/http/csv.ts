// The lists as CSV for spreadsheets (Accept: text/csv): RFC 4180, UTF-8 without a byte-order
// mark, CRLF line ends, a header row whose columns are the JSON fields in the JSON order (the
// record's schema), one row per record. A value is written as in the JSON: null is an empty
// cell, true/false and numbers as JSON writes them, text as it is, quoted when it holds a comma,
// a double quote or a line break, a lone LF or CR too (csv-stringify, ../domain/csv-cells.ts).
// One change for spreadsheet programs: a free-text cell (a name, a note, a service, an e-mail)
// that starts with =, +, -, @, TAB or CR gets a leading single quote, so that it is never run as
// a formula. The fields the API checks against a pattern or a format (phones, E.164 "+34...",
// currencies, dates, ids) and numbers are never changed: a phone keeps its leading +.
//
// Paging travels in headers, since a CSV has no room for it: X-Total-Count (the JSON's total)
// and Link: <...>; rel="next" (RFC 8288) with the next page's path and query, absent on the
// last page.
import Negotiator from 'negotiator';
import { byCollection } from '../collections/index.js';
import { recordCsv, recordsCsvText, type RecordCsv } from '../domain/csv-cells.js';
import type { ListFormat, ListResource } from '../services/conditional.js';

export const CSV_UTF8 = 'text/csv; charset=utf-8';

/** Each list's CSV: its record's fields as the columns, in the order the JSON writes them. */
const CSV: Readonly<Record<ListResource, RecordCsv>> = byCollection((c) => recordCsv(c.record.properties));

export const CSV_COLUMNS: Readonly<Record<ListResource, readonly string[]>> = byCollection((c) => CSV[c.name as ListResource].columns);

/** The CSV text of a list's `records` (a header row, then one row per record). */
export function csvText(resource: ListResource, records: readonly object[]): string {
  return recordsCsvText(CSV[resource], records);
}

/**
 * The headers of a CSV page: the total, and the next page's link while there is one. `next` is
 * the query of the next page (the parameters applied, offset advanced); the link is relative to
 * the server (a path and its query), as a client resolves it against the URL it asked.
 */
export function csvPagingHeaders(path: string, total: number, next: Record<string, string> | null): Record<string, string> {
  const headers: Record<string, string> = { 'x-total-count': String(total) };
  if (next !== null) headers['link'] = `<${path}?${new URLSearchParams(next).toString()}>; rel="next"`;
  return headers;
}

/**
 * The query of a list's next page: the request's parameters (with the days the plan applied
 * written in; null: none applied), then limit and the next offset.
 */
function nextQuery(applied: Record<string, unknown>, limit: number, offset: number): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(applied)) if (typeof value === 'string') out[name] = value;
  out['limit'] = String(limit);
  out['offset'] = String(offset);
  return out;
}

/** A built list page (the JSON's object) as CSV with its paging headers. */
export function csvListPage(
  resource: ListResource,
  page: Record<string, unknown>,
  plan: { limit: number; offset: number },
  applied: Record<string, unknown>,
): { text: string; headers: Record<string, string> } {
  const total = page['total'] as number;
  const next = plan.offset + plan.limit < total ? nextQuery(applied, plan.limit, plan.offset + plan.limit) : null;
  return {
    text: csvText(resource, page[resource] as object[]),
    headers: csvPagingHeaders(`/api/v1/${resource}`, total, next),
  };
}

// What a list answers for an Accept header: CSV when the client prefers text/csv to JSON (RFC
// 9110 proactive negotiation, by `negotiator`: q-values, then the more specific type, then the
// header's order), JSON in every other case: no Accept, */*, application/json, and also a type the
// lists do not make (text/html) or an unreadable header, which get JSON as always rather than a
// 406. text/csv may carry the parameters of what is sent (charset=utf-8, header=present).
const OFFERED = ['application/json', 'text/csv;charset=utf-8;header=present'];

export function listFormat(accept: string | undefined): ListFormat {
  if (accept === undefined || accept === '*/*' || accept === 'application/json') return 'json';
  return new Negotiator({ headers: { accept } }).mediaType(OFFERED) === OFFERED[1] ? 'csv' : 'json';
}
