// Writing a clinic's records, import, demo and erasure alike, in three steps inside one
// transaction (validate, resolve, apply), and the one place that sets that transaction up:
// SQLite's BEGIN IMMEDIATE (Database.writeTransaction), the clinic's writer lock before anything
// else (the events' seqs are taken under it), when foreign keys are checked, the bulk page cache,
// the staging tables.
//
//   validate: every line, checked by the caller (the import's parser; the demo and the erasure
//      make valid ones), copied into the staging tables (stage.ts);
//   resolve: every reference to a clienta in one anti-join (repos/staging-references.ts), by line,
//      and every deletion of what would not be there (repos/staging-deletions.ts);
//   apply: the runs of deletions in file order, and the records between them, each collection in
//      SQL (apply.ts, delete.ts); each change an event (events.ts).
//
// Then the count tables' changes and the clinic's versions, and COMMIT, or ROLLBACK when any
// line was refused: a write is all or nothing, and a refused one is never applied (a deletion of
// what would not be there at its line is found while resolving, repos/staging-deletions.ts).
//
// writeClinicData is a whole write of some lines (the import, the demo). A caller with more to do
// in the same transaction (the erasure: it decides its lines under the lock, then scrubs events)
// opens it with clinicWrite and writes its lines through the ClinicWrite it is given.
import type { Kysely } from 'kysely';
import type { Database } from '../../db/connect.js';
import type { DB } from '../../db/schema.js';
import { bumpDataVersions, ensureDataVersions } from '../../repos/clinics.js';
import { notifyEvents } from '../../repos/events.js';
import { danglingReferences, deletesClientas, markLaterReferences } from '../../repos/staging-references.js';
import { indexForDeletions, missingDeletions } from '../../repos/staging-deletions.js';
import { createStaging, dropStaging, nextDeletions } from '../../repos/staging.js';
import { checkReferencesAt, lockClinicData, withBulkCache } from '../../repos/writes.js';
import type { ClinicContext } from '../shape.js';
import { appendDeferred, applyRecords, CHUNK, LAST_LINE, type ApplyContext } from './apply.js';
import { anyChange, CountChanges, emptyCounts, type WriteCounts } from './counts.js';
import { applyDeletions, MissingRecords, type MissingRecord } from './delete.js';
import { EventLog } from './events.js';
import { Stager, type Line } from './stage.js';

export type { Line, MissingRecord, WriteCounts };

/** Problems found after staging, at most this many listed (the import's report). */
export const LISTED = 100;

/** 'insert': rows known to be new and in order (a fresh demo clinic), no events; 'upsert': import */
export type WriteMode = 'insert' | 'upsert';

export interface LinesOptions {
  /** wall clock in ms: the time of the changes (updated_at, the events) */
  now?: () => number;
  /** the apply step's progress: lines applied of those staged */
  onApply?: (done: number, total: number) => void;
}

export interface WriteOptions extends LinesOptions {
  mode: WriteMode;
  /** SQLite: how long to wait for the write lock (default: the write transaction's; a background move: 0) */
  waitMs?: number;
}

export interface WriteOutcome {
  /** committed: no line was refused */
  ok: boolean;
  counts: WriteCounts;
  /** something was created, updated or deleted */
  changed: boolean;
  /** references to no clienta: how many, how many on lines with no other problem, the first LISTED by line */
  dangling: { count: number; onGoodLines: number; first: { line: number; clientaId: string }[] };
  /** deletions of what does not exist: how many, the first LISTED by line */
  missing: { count: number; first: MissingRecord[] };
}

/** A whole write of `lines`: validate, resolve, apply, kept if no line was refused. */
export function writeClinicData(
  database: Database,
  clinic: ClinicContext,
  lines: AsyncIterable<Line> | Iterable<Line>,
  opts: WriteOptions,
): Promise<WriteOutcome> {
  return clinicWrite(
    database,
    clinic,
    opts.mode,
    (w) => w.write(lines, opts),
    (outcome) => outcome.ok,
    { waitMs: opts.waitMs },
  );
}

/**
 * A write's transaction, set up (the clinic's lock held): `work` writes its lines through the
 * ClinicWrite, once, and may read and change more in the same transaction; what it returns is
 * kept (COMMIT) if `keep` says so, after the count tables and the clinic's versions follow.
 */
export function clinicWrite<T>(
  database: Database,
  clinic: ClinicContext,
  mode: WriteMode,
  work: (w: ClinicWrite) => Promise<T>,
  keep: (out: T) => boolean,
  opts: { waitMs?: number } = {},
): Promise<T> {
  return database.writeTransaction(
    (trx) =>
      withBulkCache(trx, async () => {
        await checkReferencesAt(trx, mode === 'insert' ? 'statement' : 'commit');
        await lockClinicData(trx, clinic.clinicId);
        const w = new ClinicWrite(trx, clinic, mode);
        const out = await work(w);
        if (keep(out)) await w.finish();
        return out;
      }),
    { keep, waitMs: opts.waitMs },
  );
}

/** One write in its transaction, as clinicWrite hands it to its caller. */
export class ClinicWrite {
  private applied: ApplyContext | null = null;
  private alsoChanged = false;

  constructor(
    /** the writing transaction, under the clinic's lock */
    readonly trx: Kysely<DB>,
    private readonly clinic: ClinicContext,
    private readonly mode: WriteMode,
  ) {}

  /** Something besides the lines changed what the API shows (the erasure's scrubbed events): the versions move too. */
  changedMore(): void {
    this.alsoChanged = true;
  }

  /** Validates (stages), resolves and applies `lines`; ok when none was refused. */
  async write(lines: AsyncIterable<Line> | Iterable<Line>, opts: LinesOptions): Promise<WriteOutcome> {
    const { trx, clinic, mode } = this;
    const now = opts.now ?? Date.now;
    await createStaging(trx);

    // validate: the caller checked each line; the valid ones are staged, the others counted
    const stager = new Stager(trx, clinic.timezone);
    for await (const l of lines) await stager.add(l);
    const staged = await stager.end();
    if (mode === 'insert' && staged.deletions > 0) throw new Error('writeClinicData: deletions need upsert mode');

    // resolve: every reference to a clienta, by line
    let laterLines = 0;
    let dangling: WriteOutcome['dangling'] = { count: 0, onGoodLines: 0, first: [] };
    if (mode === 'upsert') {
      const clientaDeletions = await deletesClientas(trx);
      laterLines = await markLaterReferences(trx, clinic.clinicId, clientaDeletions);
      if (laterLines + staged.badLines > 0) dangling = await danglingReferences(trx, clinic.clinicId, LISTED, clientaDeletions);
    }
    // and every deletion of what would not be there at its line
    let missing: WriteOutcome['missing'] = { count: 0, first: [] };
    if (staged.deletions > 0) {
      await indexForDeletions(trx);
      missing = await missingDeletions(trx, clinic.clinicId, LISTED);
    }
    const refused = staged.badLines + dangling.count + missing.count > 0;

    // apply: in file order
    const at = Math.floor(now() / 1000);
    let done = 0;
    const ctx: ApplyContext = {
      db: trx,
      clinic,
      mode,
      at,
      counts: emptyCounts(),
      deltas: new CountChanges(),
      events: mode === 'upsert' ? new EventLog(trx, clinic, at) : null,
      laterLines,
      onLines: (n) => opts.onApply?.((done += n), staged.lines),
    };
    // A refused file is never applied: what resolving found is the whole answer.
    if (!refused) {
      const notFound = new MissingRecords(LISTED);
      await applyInFileOrder(ctx, notFound);
      await appendDeferred(ctx);
      if (notFound.count > 0) throw new Error(`write: a deletion found nothing that resolving found (line ${notFound.first[0]!.line})`);
    }

    const ok = !refused;
    if (ok) this.applied = ctx;
    await dropStaging(trx);
    return {
      ok,
      counts: ok ? ctx.counts : emptyCounts(),
      changed: ok && anyChange(ctx.counts),
      dangling,
      missing,
    };
  }

  /** The count tables, the versions the lists' ETags and kept search totals compare with, and the listeners. */
  async finish(): Promise<void> {
    const ctx = this.applied;
    const { trx: db, clinic } = this;
    if (ctx) await ctx.deltas.apply(db, clinic.clinicId);
    const counts = ctx?.counts ?? emptyCounts();
    if (anyChange(counts) || this.alsoChanged) {
      await ensureDataVersions(db, clinic.clinicId);
      const c = counts.clientas;
      await bumpDataVersions(db, clinic.clinicId, this.alsoChanged || c.created + c.updated + c.deleted > 0);
    }
    if ((ctx?.events?.count ?? 0) > 0) await notifyEvents(db, clinic.clinicId);
  }
}

/** Runs of deletions in file order, and the records before, between and after them. */
async function applyInFileOrder(ctx: ApplyContext, missing: MissingRecords): Promise<void> {
  let after = 0;
  for (;;) {
    let next = await nextDeletions(ctx.db, after, CHUNK);
    await applyRecords(ctx, after, next[0]?.line ?? LAST_LINE);
    if (next.length === 0) return;
    const { run, type } = next[0]!;
    for (;;) {
      const part = next.filter((d) => d.run === run);
      await applyDeletions(ctx, missing, type, part);
      after = part[part.length - 1]!.line;
      // The run goes on in the next chunk only if this one was all of it, and full.
      if (part.length < next.length || next.length < CHUNK) break;
      next = await nextDeletions(ctx.db, after, CHUNK);
      if (next[0]?.run !== run) break;
    }
  }
}
