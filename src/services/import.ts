// clinic-api import: a JSON Lines stream applied in one transaction. Lines are validated and
// written in batches as they stream; if any line is bad the transaction is rolled back and every
// problem of every bad line is reported (the first MAX_REPORTED in full, then a count).
//
// Memory stays bounded however long the file: rows and references are buffered a batch at a
// time, and references are checked against the database (where the file's earlier clientas
// already are) instead of an in-memory set of every id. A reference not resolved yet (its clienta
// may come later in the file) is parked with its line number in a temporary table and checked
// again at the end, so every dangling reference is still reported by line.
//
// Deletion lines ({"type": ..., "id": ..., "deleted": true}) apply in file order with the records
// around them; deleting what does not exist is an error of that line. Every change is an event of
// the clinic's log, written in this same transaction (record-writer.ts).
import readline from 'node:readline';
import type { Readable } from 'node:stream';
import type { Kysely } from 'kysely';
import type { Database } from '../db/connect.js';
import type { DB } from '../db/schema.js';
import { DomainError } from '../errors.js';
import { getClinic } from '../repos/clinics.js';
import {
  dropParkedRefs,
  existingClientaIds,
  lockClinicData,
  parkedMissing,
  parkRefs,
  prepareImportSession,
  withBulkCache,
} from '../repos/writes.js';
import { parseImportLine, REFERENCE_ORDER, type FieldProblem } from './import-lines.js';
import { emptyCounts, RecordWriter, type MissingRecord, type WriteCounts } from './record-writer.js';

export const MAX_REPORTED = 100;
/** References checked against the database at a time. */
const REF_BATCH = 5_000;
/** onProgress is called every this many lines, and once at the end. */
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

/** A problem with its place in the line, for merging the references found missing at the end. */
type Placed = LineProblem & { order: number };

const byPlace = (a: Placed, b: Placed) => a.line - b.line || a.order - b.order;

export interface ImportProgress {
  lines: number;
  /** bytes of input read so far (UTF-8, line ends included) */
  bytes: number;
  badLines: number;
}

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

type Ref = { line: number; id: string; badLine: boolean };

/** The references of a stretch of lines, resolved against the database in one query. */
class RefChecker {
  private refs: Ref[] = [];
  parked = 0;

  constructor(
    private readonly db: Kysely<DB>,
    private readonly clinicId: string,
    private readonly writer: RecordWriter,
  ) {}

  async add(line: number, id: string, badLine: boolean): Promise<void> {
    this.refs.push({ line, id, badLine });
    if (this.refs.length >= REF_BATCH) await this.check();
  }

  async check(): Promise<void> {
    if (this.refs.length === 0) return;
    // The clientas read so far must be in the database before they can be looked up there
    // (and deletions applied); citas and calls may still be on their way.
    await this.writer.storeClientas();
    let found: Set<string>;
    try {
      found = await existingClientaIds(this.db, this.clinicId, [...new Set(this.refs.map((r) => r.id))]);
    } catch (err) {
      // A batch in flight that failed (and aborted the transaction) is the cause to report.
      await this.writer.flush();
      throw err;
    }
    const unresolved = this.refs.filter((r) => !found.has(r.id));
    this.refs = [];
    if (unresolved.length > 0) {
      await parkRefs(this.db, unresolved);
      this.parked += unresolved.length;
    }
  }
}

export async function importJsonLines(
  database: Database,
  clinicId: string,
  input: Readable,
  opts: ImportOptions = {},
): Promise<ImportResult> {
  const clinic = await getClinic(database.db, clinicId);
  if (!clinic) throw new DomainError('not_found', `No clinic with id ${clinicId}`, { field: 'clinic' });

  let errors: Placed[] = [];
  let errorCount = 0;
  let badLines = 0;
  const report = (line: number, problems: FieldProblem[]) => {
    badLines++;
    errorCount += problems.length;
    for (const p of problems) {
      if (errors.length >= MAX_REPORTED) break;
      errors.push({ line, field: p.field, reason: p.reason, order: p.order });
    }
  };

  let lines = 0;
  let bytes = 0;
  let counts = emptyCounts();
  let changed = false;
  const Rollback = Symbol('rollback');

  try {
    // BEGIN IMMEDIATE on SQLite: importers in other processes wait for this one, not fail.
    await database.writeTransaction((trx) =>
      withBulkCache(trx, async () => {
        await prepareImportSession(trx);
        // The clinic's writer lock, then everything else: the events' seqs are taken under it.
        await lockClinicData(trx, clinic.id);
        const writer = new RecordWriter(
          trx,
          { clinicId: clinic.id, timezone: clinic.timezone, currency: clinic.currency },
          {
            now: opts.now,
            onMissing: (m) => {
              report(m.line, [{ field: 'id', reason: missingReason(m), order: 1 }]);
              writer.discardEvents = true;
            },
          },
        );
        const refs = new RefChecker(trx, clinic.id, writer);
        let deletingClientas = false;

        const rl = readline.createInterface({ input, crlfDelay: Infinity });
        for await (const raw of rl) {
          lines++;
          bytes += Buffer.byteLength(raw) + 1;
          if (lines % PROGRESS_LINES === 0) opts.onProgress?.({ lines, bytes, badLines });
          const parsed = parseImportLine(raw);
          if (parsed === null) continue;
          if ('deletion' in parsed) {
            const { type, id } = parsed.deletion;
            // References made before a clienta goes are checked while she is still there.
            if (type === 'clienta' && !deletingClientas) await refs.check();
            deletingClientas = type === 'clienta';
            await writer.delete(type, id, lines);
            continue;
          }
          deletingClientas = false;
          // The deletions before this line are applied (and their problems reported) first: problems stay in line order.
          await writer.endDeletions();
          if ('problems' in parsed) {
            report(lines, parsed.problems);
            if (parsed.clientaId !== null) await refs.add(lines, parsed.clientaId, true);
            // Nothing will be kept: the rest is still written (later lines resolve against it), without events.
            writer.discardEvents = true;
            continue;
          }
          const rec = parsed.record;
          if (rec.type !== 'clienta' && rec.clienta_id !== null) await refs.add(lines, rec.clienta_id, false);
          await writer.add(rec);
          if (errorCount > 0) writer.discardEvents = true;
        }
        opts.onProgress?.({ lines, bytes, badLines });
        await refs.check();
        await writer.flush();

        if (refs.parked > 0) {
          const missing = await parkedMissing(trx, clinic.id, MAX_REPORTED);
          // Dangling references are known only now but may come before problems already listed,
          // even on the same line (clienta_id is the second field): the list stays the first
          // MAX_REPORTED problems by line and field order.
          errorCount += missing.count;
          badLines += missing.onGoodLines;
          const dangling = missing.first.map((m): Placed => ({
            line: m.line,
            field: 'clienta_id',
            reason: danglingReason(m.clienta_id),
            order: REFERENCE_ORDER,
          }));
          errors = [...errors, ...dangling].sort(byPlace).slice(0, MAX_REPORTED);
        }
        if (errorCount > 0) throw Rollback;
        await writer.finish();
        await dropParkedRefs(trx);
        counts = writer.counts;
        changed = writer.changed;
      }),
    );
  } catch (err) {
    if (err !== Rollback) throw err;
  }
  return {
    ok: errorCount === 0,
    lines,
    counts,
    changed,
    errors: errors.map(({ line, field, reason }) => ({ line, field, reason })),
    errorCount,
    badLines,
  };
}
