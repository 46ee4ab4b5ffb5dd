// The whole clinic as a ZIP: `clinic-api export` and Settings > API > Export (made in the
// background: ./jobs.ts). Every record in the import format (docs/import.md), one file of JSON
// Lines that `clinic-api import` takes as it is (each collection in write order), and each
// table as CSV with the same columns, plus a LEEME.txt / README.txt in the clinic's language.
//
// Constant memory for any size: each table is read a page at a time (keyset on its primary key,
// repos/clinic-export.ts) straight into the ZIP's stream, which waits for its destination.
// Consistent: every page is read in one snapshot of the database (Database.readSnapshot), so a
// change made meanwhile (a record and one referring to it created between two tables' passes)
// never makes a file whose lines disagree, and its import never finds a reference to nothing.
//
// What the import format does not hold is not exported: derived fields (the service computes
// them again), `updated_at` (an import is a change: the copy's records carry its time), and the
// change feed's events.
import type { Writable } from 'node:stream';
import { stringify } from 'csv-stringify/sync';
import type { Kysely } from 'kysely';
import type { Database } from '../../db/connect.js';
import type { DB } from '../../db/schema.js';
import { freeTextFields, recordCsvOptions } from '../../domain/csv-cells.js';
import { COLLECTIONS, WRITE_ORDER, type CollectionName } from '../../collections/index.js';
import { recordPage } from '../../repos/clinic-export.js';
import { recordCounts } from '../../repos/clinic-rows.js';
import type { Clinic } from '../../repos/clinics.js';
import { formatTimestamp, formatTimestampMs } from '../../time.js';
import { clinicReadme, exportLang, README_NAME } from './readme.js';
import { writeZip, type ZipEntry } from './zip.js';

/** Rows per page read. */
export const EXPORT_PAGE = 1_000;

/** The JSON Lines file of the ZIP: `clinic-api import --clinic ID clinica.jsonl`. */
export const JSONL_NAME = 'clinica.jsonl';

export type RecordCounts = Record<CollectionName, number>;

export interface ClinicExportOptions {
  nowMs: number;
  /** records written so far (each is written twice: JSON Lines, then CSV) of the total */
  onProgress?: (done: number, total: number) => void;
  signal?: AbortSignal;
}

export interface ClinicExportResult {
  bytes: number;
  counts: RecordCounts;
}

type Line = Record<string, unknown>;

/** Each collection in write order (clientas before the records that refer to them): its lines in the import format, a page at a time. */
function tables(db: Kysely<DB>, clinic: Clinic) {
  const at = (s: number) => formatTimestamp(s, clinic.timezone);
  return WRITE_ORDER.map((name) => {
    const c = COLLECTIONS[name];
    return {
      name,
      schema: c.line,
      page: (after: string | null) => recordPage(db, name, clinic.id, after, EXPORT_PAGE) as Promise<{ id: string }[]>,
      line: (r: unknown): Line => c.toLine(r as Record<string, unknown>, at),
    };
  });
}

/** The CSV cells a spreadsheet would run as formulas are those of text people typed: the API's free-text fields. */
const FREE_TEXT = new Set(Object.values(COLLECTIONS).flatMap((c) => [...freeTextFields(c.record.properties)]));

/** Writes the clinic's export into `out` (ended at the end), every read in one snapshot. */
export async function writeClinicExport(
  database: Database,
  clinic: Clinic,
  out: Writable,
  opts: ClinicExportOptions,
): Promise<ClinicExportResult> {
  return database.readSnapshot(async (db) => {
    const counts: RecordCounts = await recordCounts(db, clinic.id);
    const total = 2 * Object.values(counts).reduce((a, b) => a + b, 0);
    let done = 0;
    const advance = (n: number) => {
      done += n;
      opts.onProgress?.(done, total);
    };
    const list = tables(db, clinic);

    /** Every line of a table, a page at a time, as one text per page. */
    async function* pages<R extends { id: string }>(
      page: (after: string | null) => Promise<R[]>,
      render: (rows: R[]) => string,
    ): AsyncGenerator<string> {
      for (let after: string | null = null; ;) {
        opts.signal?.throwIfAborted();
        const rows = await page(after);
        if (rows.length === 0) return;
        yield render(rows);
        advance(rows.length);
        if (rows.length < EXPORT_PAGE) return;
        after = rows[rows.length - 1]!.id;
      }
    }

    async function* jsonl(): AsyncGenerator<string> {
      for (const t of list) {
        yield* pages(t.page, (rows) => rows.map((r) => `${JSON.stringify(t.line(r))}\n`).join(''));
      }
    }

    const csvEntry = (t: (typeof list)[number]): ZipEntry => {
      const columns = Object.keys(t.schema.properties).filter((c) => c !== 'type');
      const options = recordCsvOptions(columns, FREE_TEXT);
      return {
        name: `${t.name}.csv`,
        content: async function* () {
          yield stringify([columns], options);
          yield* pages(t.page, (rows) =>
            stringify(
              rows.map((r) => {
                const l = t.line(r);
                return columns.map((c) => l[c]);
              }),
              options,
            ),
          );
        },
      };
    };

    const lang = exportLang(clinic.language);
    const readme = clinicReadme(lang, { clinic: clinic.name, madeAt: formatTimestampMs(opts.nowMs, clinic.timezone), counts });
    const entries: ZipEntry[] = [{ name: README_NAME[lang], content: readme }, { name: JSONL_NAME, content: jsonl }, ...list.map(csvEntry)];
    const bytes = await writeZip(entries, out, new Date(opts.nowMs), opts.signal);
    return { bytes, counts };
  });
}
