// What every CSV the service writes shares (the lists' Accept: text/csv, and the CLI's logs and
// access): csv-stringify's options, and the rule for cells a spreadsheet would run as a formula.
//
// Line breaks: a field holding CR or LF is always quoted, a lone one too. csv-stringify quotes
// only the record delimiter itself (CRLF) once one is set, so a bare LF or CR in a note would
// split one record into two rows in Excel, Google Sheets and any RFC 4180 reader.
//
// Formulas (OWASP, "CSV Injection"): a cell that starts with =, +, -, @, TAB or CR (or the
// full-width = + - @ some programs fold to them) is read as a formula by spreadsheet programs,
// and =HYPERLINK(...) in a name or a user agent sends the sheet's data elsewhere when clicked.
// Such a cell is neutralised: a single quote before it, and the field in double quotes.
import type { Options } from 'csv-stringify';
import { stringify } from 'csv-stringify/sync';

/** A text that a spreadsheet would take as the start of a formula. */
export const FORMULA_START = /^[=+\-@\t\r\uFF1D\uFF0B\uFF0D\uFF20]/;

/** Every CSV: CRLF after each record, and any field holding CR or LF (alone too) quoted. */
export const CSV_OPTIONS: Options = { record_delimiter: 'windows', quote_record_delimiter: true };

/**
 * The options of one neutralised cell (a cast's answer): csv-stringify prefixes the single quote
 * (escape_formulas), and the field is quoted.
 */
export const NEUTRALISED_CELL = { escape_formulas: true, quoted: true } as const;

/**
 * Whether a field of a record's schema is free text: a string (or null) checked against no
 * pattern, format or list of values: what people typed (names, notes, services, e-mails).
 */
export function isFreeText(schema: Record<string, unknown>): boolean {
  const type = schema['type'];
  const isString = type === 'string' || (Array.isArray(type) && type.includes('string'));
  return isString && schema['pattern'] === undefined && schema['format'] === undefined && schema['enum'] === undefined;
}

/**
 * The options of a CSV of records whose columns are `columns`: booleans as JSON's words, and a
 * cell of a column in `freeText` that would start a formula neutralised; every other cell (ids,
 * phones, dates, numbers) is written as it is.
 */
export function recordCsvOptions(columns: readonly string[], freeText: ReadonlySet<string>): Options {
  const neutralise = columns.map((c) => freeText.has(c));
  return {
    ...CSV_OPTIONS,
    cast: {
      // csv-stringify writes booleans as 1 and an empty cell by default; the JSON's words instead.
      boolean: (v) => (v ? 'true' : 'false'),
      // ctx.index is the column; the header row's names never start a formula.
      string: (v, ctx) => (neutralise[ctx.index] === true && FORMULA_START.test(v) ? { value: v, ...NEUTRALISED_CELL } : v),
    },
  };
}

/** The free-text fields of a record's schema (its `properties`), by name. */
export function freeTextFields(properties: Record<string, unknown>): Set<string> {
  return new Set(
    Object.entries(properties)
      .filter(([, s]) => isFreeText(s as Record<string, unknown>))
      .map(([name]) => name),
  );
}

/** The audit CSVs (logs, access), written for people: every text cell that starts a formula is neutralised. */
export const AUDIT_CSV_OPTIONS: Options = { ...CSV_OPTIONS, escape_formulas: true, quoted_match: FORMULA_START };

/** A record schema's CSV: its fields as the columns, in the order the JSON writes them, and their options. */
export interface RecordCsv {
  columns: readonly string[];
  options: Options;
}

export function recordCsv(properties: Record<string, unknown>): RecordCsv {
  const columns = Object.keys(properties);
  return { columns, options: recordCsvOptions(columns, freeTextFields(properties)) };
}

/** The CSV text of `records` (a header row, then one row per record). */
export function recordsCsvText(csv: RecordCsv, records: readonly object[]): string {
  const rows: unknown[][] = [csv.columns as string[]];
  for (const r of records) {
    const record = r as Record<string, unknown>;
    rows.push(csv.columns.map((c) => record[c]));
  }
  return stringify(rows, csv.options);
}
