// clinic-api import: a JSON Lines stream applied in one transaction. Lines are validated and
// written in batches as they stream (bounded memory for the rows); if any line is bad the
// transaction is rolled back and every bad line is reported (the first MAX_REPORTED in full).
import readline from 'node:readline';
import type { Readable } from 'node:stream';
import { sql } from 'kysely';
import type { Database } from '../db/connect.js';
import { getClinic } from '../repos/clinics.js';
import { existingClientaIds } from '../repos/writes.js';
import { parseImportLine } from './import-lines.js';
import { RecordWriter } from './record-writer.js';

export const MAX_REPORTED = 100;

export interface LineProblem {
  line: number;
  reason: string;
}

export interface ImportResult {
  ok: boolean;
  lines: number;
  counts: { clientas: number; citas: number; llamadas: number };
  /** the first MAX_REPORTED problems */
  errors: LineProblem[];
  errorCount: number;
}

export class ImportAborted extends Error {}

export interface ImportOptions {
  onProgress?: (p: { lines: number; bytes: number }) => void;
}

export async function importJsonLines(
  database: Database,
  clinicId: string,
  input: Readable,
  opts: ImportOptions = {},
): Promise<ImportResult> {
  const clinic = await getClinic(database.db, clinicId);
  if (!clinic) throw new ImportAborted(`No clinic with id ${clinicId}`);

  const errors: LineProblem[] = [];
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
    await database.db.transaction().execute(async (trx) => {
      if (database.dialect === 'sqlite') await sql`pragma defer_foreign_keys = on`.execute(trx);
      const writer = new RecordWriter(trx, clinic.id, clinic.timezone);
      const clientaIds = new Set<string>();
      // references not (yet) seen in the file: clienta id -> the lines that use it
      const pending = new Map<string, number[]>();

      const rl = readline.createInterface({ input, crlfDelay: Infinity });
      for await (const raw of rl) {
        lines++;
        bytes += Buffer.byteLength(raw) + 1;
        if (lines % 10_000 === 0) opts.onProgress?.({ lines, bytes });
        const parsed = parseImportLine(raw);
        if (parsed === null) continue;
        if ('error' in parsed) {
          report(lines, parsed.error);
          continue;
        }
        const rec = parsed.record;
        if (rec.type === 'clienta') {
          clientaIds.add(rec.id);
          pending.delete(rec.id);
        } else if (rec.clienta_id !== null && !clientaIds.has(rec.clienta_id)) {
          const uses = pending.get(rec.clienta_id);
          if (uses) uses.push(lines);
          else pending.set(rec.clienta_id, [lines]);
        }
        // Once a line is bad nothing will be written, so stop buffering rows.
        if (errorCount === 0) await writer.add(rec);
      }
      opts.onProgress?.({ lines, bytes });

      if (pending.size > 0) {
        const found = await existingClientaIds(trx, clinic.id, [...pending.keys()]);
        const missing: LineProblem[] = [];
        for (const [id, uses] of pending) {
          if (found.has(id)) continue;
          for (const line of uses) missing.push({ line, reason: `clienta_id ${id} is not a clienta of this clinic nor in the file` });
        }
        // Every line with a dangling reference is bad. They are known only now but may come before
        // lines already reported: keep the list the first MAX_REPORTED problems by line number.
        errorCount += missing.length;
        errors.push(...missing.sort((a, b) => a.line - b.line).slice(0, MAX_REPORTED));
        errors.sort((a, b) => a.line - b.line);
        errors.splice(MAX_REPORTED);
      }
      if (errorCount > 0) throw Rollback;
      await writer.finish();
      counts = writer.counts;
    });
  } catch (err) {
    if (err !== Rollback) throw err;
  }
  return { ok: errorCount === 0, lines, counts, errors, errorCount };
}
