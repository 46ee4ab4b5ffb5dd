// clinic-api import: a JSON Lines stream applied in one transaction. Lines are validated and
// written in batches as they stream; if any line is bad the transaction is rolled back and every
// bad line is reported (the first MAX_REPORTED in full, then a count).
//
// Memory stays bounded however long the file: rows and references are buffered a batch at a
// time, and references are checked against the database (where the file's earlier clientas
// already are) instead of an in-memory set of every id. A reference not resolved yet (its clienta
// may come later in the file) is parked with its line number in a temporary table and checked
// again at the end, so every dangling reference is still reported by line.
import readline from 'node:readline';
import type { Readable } from 'node:stream';
import type { Kysely } from 'kysely';
import type { Database } from '../db/connect.js';
import type { DB } from '../db/schema.js';
import { DomainError } from '../errors.js';
import { getClinic } from '../repos/clinics.js';
import {
  dropParkedRefs, existingClientaIds, lockClinicData, parkedMissing, parkRefs, prepareImportSession, withBulkCache,
} from '../repos/writes.js';
import { parseImportLine } from './import-lines.js';
import { RecordWriter } from './record-writer.js';

export const MAX_REPORTED = 100;
/** References checked against the database at a time. */
const REF_BATCH = 5_000;
/** onProgress is called every this many lines, and once at the end. */
export const PROGRESS_LINES = 10_000;

export interface LineProblem {
  line: number;
  reason: string;
}

export interface ImportResult {
  ok: boolean;
  lines: number;
  counts: { clientas: number; citas: number; llamadas: number };
  /** the first MAX_REPORTED problems, by line number */
  errors: LineProblem[];
  errorCount: number;
}

export interface ImportProgress {
  lines: number;
  /** bytes of input read so far (UTF-8, line ends included) */
  bytes: number;
  badLines: number;
}

export interface ImportOptions {
  onProgress?: (p: ImportProgress) => void;
}

const danglingReason = (id: string) => `clienta_id ${id} is not a clienta of this clinic nor in the file`;

/** The references of a stretch of lines, resolved against the database in one query. */
class RefChecker {
  private refs: { line: number; id: string }[] = [];
  parked = 0;

  constructor(private readonly db: Kysely<DB>, private readonly clinicId: string, private readonly writer: RecordWriter) {}

  async add(line: number, id: string): Promise<void> {
    this.refs.push({ line, id });
    if (this.refs.length >= REF_BATCH) await this.check();
  }

  async check(): Promise<void> {
    if (this.refs.length === 0) return;
    // The clientas read so far must be in the database before they can be looked up there.
    await this.writer.flush();
    const found = await existingClientaIds(this.db, this.clinicId, [...new Set(this.refs.map((r) => r.id))]);
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

  let errors: LineProblem[] = [];
  let errorCount = 0;
  const report = (line: number, reason: string) => {
    errorCount++;
    if (errors.length < MAX_REPORTED) errors.push({ line, reason });
  };

  let lines = 0;
  let bytes = 0;
  let counts = { clientas: 0, citas: 0, llamadas: 0 };
  const Rollback = Symbol('rollback');

  try {
    await withBulkCache(database.db, () => database.db.transaction().execute(async (trx) => {
      await prepareImportSession(trx);
      await lockClinicData(trx, clinic.id);
      const writer = new RecordWriter(trx, clinic.id, clinic.timezone);
      const refs = new RefChecker(trx, clinic.id, writer);

      const rl = readline.createInterface({ input, crlfDelay: Infinity });
      for await (const raw of rl) {
        lines++;
        bytes += Buffer.byteLength(raw) + 1;
        if (lines % PROGRESS_LINES === 0) opts.onProgress?.({ lines, bytes, badLines: errorCount });
        const parsed = parseImportLine(raw);
        if (parsed === null) continue;
        if ('error' in parsed) {
          report(lines, parsed.error);
          continue;
        }
        const rec = parsed.record;
        if (rec.type !== 'clienta' && rec.clienta_id !== null) await refs.add(lines, rec.clienta_id);
        // Once a line is bad nothing will be kept: only clientas are still written, because the
        // references of later lines are resolved against them.
        if (errorCount === 0 || rec.type === 'clienta') await writer.add(rec);
      }
      opts.onProgress?.({ lines, bytes, badLines: errorCount });
      await refs.check();
      await writer.flush();

      if (refs.parked > 0) {
        const missing = await parkedMissing(trx, clinic.id, MAX_REPORTED);
        // Dangling references are known only now but may come before lines already reported:
        // the list stays the first MAX_REPORTED problems by line number.
        errorCount += missing.count;
        errors = [...errors, ...missing.first.map((m) => ({ line: m.line, reason: danglingReason(m.clienta_id) }))]
          .sort((a, b) => a.line - b.line)
          .slice(0, MAX_REPORTED);
      }
      if (errorCount > 0) throw Rollback;
      await writer.finish();
      await dropParkedRefs(trx);
      counts = writer.counts;
    }));
  } catch (err) {
    if (err !== Rollback) throw err;
  }
  return { ok: errorCount === 0, lines, counts, errors, errorCount };
}
