// Validate, the first step of a write: the lines of the file, checked by the caller, copied into
// the staging tables (repos/staging.ts) under their line numbers, a few thousand at a time, so
// memory stays a batch whatever the file's size. On PostgreSQL a batch is stored while the caller reads the next.
import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.js';
import type { DeletionRecord, ImportRecord } from '../../domain/records.js';
import { stage, type StagedTable } from '../../repos/staging.js';
import { rowOf, TABLE_OF, type RecordType } from './rows.js';

/** One line of the input: a record, a deletion, or a line with problems (its clienta_id still to check). */
export type Line =
  { line: number; record: ImportRecord } | { line: number; deletion: DeletionRecord } | { line: number; bad: { clientaId: string | null } };

/** Lines buffered before they are staged. */
const BATCH = 5_000;

export interface StagedLines {
  /** record and deletion lines */
  lines: number;
  deletions: number;
  badLines: number;
}

export class Stager {
  private batch = new Map<StagedTable, Record<string, unknown>[]>();
  private size = 0;
  private run = 0;
  /** The type of the deletion run the last line continued; null after any other line. */
  private deleting: RecordType | null = null;
  private inFlight: Promise<void> = Promise.resolve();
  private readonly totals: StagedLines = { lines: 0, deletions: 0, badLines: 0 };

  constructor(
    private readonly db: Kysely<DB>,
    private readonly zone: string,
  ) {}

  async add(l: Line): Promise<void> {
    if ('record' in l) {
      this.deleting = null;
      this.totals.lines++;
      this.push(TABLE_OF[l.record.type], { line: l.line, ...rowOf(l.record, this.zone) });
    } else if ('deletion' in l) {
      // Consecutive deletions of one type are one run, applied together, between the records around them.
      if (this.deleting !== l.deletion.type) this.run++;
      this.deleting = l.deletion.type;
      this.totals.lines++;
      this.totals.deletions++;
      this.push('deletions', { line: l.line, run: this.run, type: l.deletion.type, id: l.deletion.id });
    } else {
      this.deleting = null;
      this.totals.badLines++;
      if (l.bad.clientaId !== null) this.push('bad_refs', { line: l.line, clienta_id: l.bad.clientaId });
    }
    if (this.size >= BATCH) await this.flush();
  }

  /** Stages what is buffered and waits until every line is stored. */
  async end(): Promise<StagedLines> {
    await this.flush();
    await this.inFlight;
    return this.totals;
  }

  private push(table: StagedTable, row: Record<string, unknown>): void {
    let rows = this.batch.get(table);
    if (rows === undefined) this.batch.set(table, (rows = []));
    rows.push(row);
    this.size++;
  }

  /** Hands the batch to the database once the previous one is stored; does not wait for it. */
  private async flush(): Promise<void> {
    await this.inFlight;
    if (this.size === 0) return;
    const batch = this.batch;
    this.batch = new Map();
    this.size = 0;
    const write = (async () => {
      for (const [table, rows] of batch) await stage(this.db, table, rows);
    })();
    // A failure surfaces at the next flush or at end(); until then nothing is left unhandled.
    this.inFlight = write;
    write.catch(() => {});
  }
}
