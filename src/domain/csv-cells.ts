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

/** A text that a spreadsheet would take as the start of a formula. */
export const FORMULA_START = /^[=+\-@\t\r\uFF1D\uFF0B\uFF0D\uFF20]/;

/** Every CSV: CRLF after each record, and any field holding CR or LF (alone too) quoted. */
export const CSV_OPTIONS: Options = { record_delimiter: 'windows', quote_record_delimiter: true };

/**
 * The options of one neutralised cell (a cast's answer): csv-stringify prefixes the single quote
 * (escape_formulas), and the field is quoted.
 */
export const NEUTRALISED_CELL = { escape_formulas: true, quoted: true } as const;

/** The audit CSVs (logs, access), written for people: every text cell that starts a formula is neutralised. */
export const AUDIT_CSV_OPTIONS: Options = { ...CSV_OPTIONS, escape_formulas: true, quoted_match: FORMULA_START };
