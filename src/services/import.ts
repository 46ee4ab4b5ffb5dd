// clinic-api import: a JSON Lines stream applied in one transaction (services/write/session.ts:
// every line staged, every reference resolved, then applied). If any line is bad nothing is
// applied and every problem of every bad line is reported (the first MAX_REPORTED in full, then
// a count). Memory stays bounded however long the file: lines are staged a batch at a time, and
// only the first MAX_REPORTED problems are kept.
//
// Deletion lines ({"type": ..., "id": ..., "deleted": true}) apply in file order with the records
// around them; deleting what does not exist is an error of that line. Every change is an event of
// the clinic's log, written in this same transaction.
import readline from 'node:readline';
import type { Readable } from 'node:stream';
import type { Database } from '../db/connect.js';
import { DomainError } from '../errors.js';
import { getClinic } from '../repos/clinics.js';
import { sandboxRefusal } from './sandbox.js';
import { parseImportLine, REFERENCE_ORDER, type FieldProblem } from './import-lines.js';
import { LISTED, writeClinicData, type Line, type MissingRecord, type WriteCounts, type WriteOutcome } from './write/session.js';

export const MAX_REPORTED = LISTED;
/** onProgress is called every this many lines read, and once at the end of the reading. */
export const PROGRESS_LINES = 10_000;

/**
 * One problem: a line with several gets one entry per problem, in the format's field order, so
 * each reads as one fix (`line 3: precio must ...`) and `--json` stays a flat list.
 */
export interface LineProblem {
  line: number;
  /** the field it is about; null when it is about the whole line (not JSON, not an object) */
  field: string | null;
  reason: string;
}

export interface ImportResult {
  ok: boolean;
  lines: number;
  /** per type: created, updated (cascades included), unchanged, deleted (cascades included); all 0 when refused */
  counts: WriteCounts;
  /** something was created, updated or deleted (false: the data was already as the file says) */
  changed: boolean;
  /** the first MAX_REPORTED problems, by line number and then field order */
  errors: LineProblem[];
  /** every problem, listed or not */
  errorCount: number;
  /** lines with at least one problem */
  badLines: number;
}

/** A problem with its place in the line, for merging the problems found after reading. */
type Placed = LineProblem & { order: number };

const byPlace = (a: Placed, b: Placed) => a.line - b.line || a.order - b.order;

/** Reading the file (bytes of it), then writing what it holds (lines of it). */
export type ImportProgress =
  { phase: 'reading'; lines: number; bytes: number; badLines: number } | { phase: 'writing'; done: number; total: number };

export interface ImportOptions {
  onProgress?: (p: ImportProgress) => void;
  /** wall clock in ms: the time of the changes (updated_at, the events) */
  now?: () => number;
}

const danglingReason = (id: string) => `clienta_id ${id} is not a clienta of this clinic nor in the file`;
const missingReason = (m: MissingRecord) =>
  m.again
    ? `${m.type} ${m.id} was already deleted earlier in the file`
    : `${m.type} ${m.id} does not exist in this clinic, so it cannot be deleted`;

/**
 * Every problem of the import, counted here and nowhere else: those found while reading (a line's
 * fields), then those the write found while resolving (references to no clienta, deletions of
 * nothing). The first MAX_REPORTED by line and field order are kept, all are counted, and so are
 * the lines with at least one.
 */
class Report {
  private listed: Placed[] = [];
  count = 0;
  badLines = 0;

  /** A line refused while reading, with its problems. */
  add(line: number, problems: readonly FieldProblem[]): void {
    this.badLines++;
    this.count += problems.length;
    for (const p of problems) if (this.listed.length < MAX_REPORTED) this.listed.push({ line, ...p });
  }

  /**
   * What the write found while resolving. Known only after reading, these may come before
   * problems already listed, even on the same line (clienta_id is the second field): the list
   * stays the first MAX_REPORTED by line and field order. A missing clienta on a line with no
   * other problem makes it a bad line; a deletion of nothing too.
   */
  addResolved(out: WriteOutcome): void {
    this.listed.push(
      ...out.dangling.first.map((m) => ({
        line: m.line,
        field: 'clienta_id',
        reason: danglingReason(m.clientaId),
        order: REFERENCE_ORDER,
      })),
      ...out.missing.first.map((m) => ({ line: m.line, field: 'id', reason: missingReason(m), order: 1 })),
    );
    this.count += out.dangling.count + out.missing.count;
    this.badLines += out.dangling.onGoodLines + out.missing.count;
  }

  /** The first MAX_REPORTED problems, by line and then field order. */
  errors(): LineProblem[] {
    return [...this.listed]
      .sort(byPlace)
      .slice(0, MAX_REPORTED)
      .map(({ line, field, reason }) => ({ line, field, reason }));
  }
}

/** The lines of `input`, parsed: problems go to `report`, progress to `onProgress`. */
async function* parsedLines(input: Readable, report: Report, read: { lines: number }, opts: ImportOptions): AsyncGenerator<Line> {
  let bytes = 0;
  for await (const raw of readline.createInterface({ input, crlfDelay: Infinity })) {
    const line = ++read.lines;
    bytes += Buffer.byteLength(raw) + 1;
    if (line % PROGRESS_LINES === 0) opts.onProgress?.({ phase: 'reading', lines: line, bytes, badLines: report.badLines });
    const parsed = parseImportLine(raw);
    if (parsed === null) continue;
    if ('problems' in parsed) {
      report.add(line, parsed.problems);
      // Its clienta_id is still resolved: one that matches no clienta is one more problem of the line.
      yield { line, bad: { clientaId: parsed.clientaId } };
    } else yield 'deletion' in parsed ? { line, deletion: parsed.deletion } : { line, record: parsed.record };
  }
  opts.onProgress?.({ phase: 'reading', lines: read.lines, bytes, badLines: report.badLines });
}

export async function importJsonLines(
  database: Database,
  clinicId: string,
  input: Readable,
  opts: ImportOptions = {},
): Promise<ImportResult> {
  const clinic = await getClinic(database.db, clinicId);
  if (!clinic) throw new DomainError('not_found', `No clinic with id ${clinicId}`, { field: 'clinic' });
  // Real data never enters a sandbox (test mode): its data is made by the service.
  if (clinic.sandbox_of !== null) throw sandboxRefusal(clinic, 'nothing can be imported into it');

  const report = new Report();
  const read = { lines: 0 };
  const out = await writeClinicData(
    database,
    { clinicId: clinic.id, timezone: clinic.timezone, currency: clinic.currency },
    parsedLines(input, report, read, opts),
    { mode: 'upsert', now: opts.now, onApply: (done, total) => opts.onProgress?.({ phase: 'writing', done, total }) },
  );

  report.addResolved(out);
  return {
    ok: out.ok,
    lines: read.lines,
    counts: out.counts,
    changed: out.changed,
    errors: report.errors(),
    errorCount: report.count,
    badLines: report.badLines,
  };
}
