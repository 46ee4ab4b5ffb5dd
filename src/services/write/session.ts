// Writing a clinic's records, import and demo alike, in two phases inside one transaction, and
// the one place that sets that transaction up: SQLite's BEGIN IMMEDIATE (Database.writeTransaction),
// the clinic's writer lock before anything else (the events' seqs are taken under it), when
// foreign keys are checked, the bulk page cache, the staging tables.
//
//   1. stage: every line, validated by the caller, into the staging tables (stage.ts);
//   2. resolve: every reference to a clienta in one anti-join (repos/staging.ts), by line;
//   3. apply: the runs of deletions in file order, and the records between them, clientas,
//      citas, calls, each in SQL (apply.ts, delete.ts); each change an event (events.ts).
//
// Then the count tables' changes and the clinic's versions, and COMMIT, or ROLLBACK when any
// line was refused: a write is all or nothing. A file with refused lines is still applied (without
// events) when it deletes something, so that a deletion of what does not exist is reported too.
import type { Kysely } from 'kysely';
import type { Database } from '../../db/connect.js';
import type { DB } from '../../db/schema.js';
import { bumpDataVersions, ensureDataVersions } from '../../repos/clinics.js';
import { notifyEvents } from '../../repos/events.js';
import { danglingReferences, deletesClientas, markLaterReferences } from '../../repos/staging-references.js';
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

export interface WriteOptions {
  /** 'insert': rows known to be new and in order (a fresh demo clinic), no events; 'upsert': import */
  mode: 'insert' | 'upsert';
  /** wall clock in ms: the time of the changes (updated_at, the events) */
  now?: () => number;
  /** phase three's progress: lines applied of those staged */
  onApply?: (done: number, total: number) => void;
  /** more work in the same transaction (erasure: services/erasure.ts) */
  extra?: ExtraWork;
  /** SQLite: how long to wait for the write lock (default: the write transaction's; a background move: 0) */
  waitMs?: number;
}

/**
 * Work that belongs to a write's transaction: `before` runs under the clinic's lock before the
 * lines are read (it may decide what they are), `after` once they are applied, if the write is
 * kept; it says whether it changed what the API shows (the clinic's versions are bumped then too).
 */
export interface ExtraWork {
  before(trx: Kysely<DB>): Promise<void>;
  after(trx: Kysely<DB>): Promise<boolean>;
}

export interface WriteOutcome {
  /** committed: no line was refused */
  ok: boolean;
  counts: WriteCounts;
  /** something was created, updated or deleted */
  changed: boolean;
  /** refused lines the caller passed in */
  badLines: number;
  /** references to no clienta: how many, how many on lines with no other problem, the first LISTED by line */
  dangling: { count: number; onGoodLines: number; first: { line: number; clientaId: string }[] };
  /** deletions of what does not exist: how many, the first LISTED by line */
  missing: { count: number; first: MissingRecord[] };
}

export async function writeClinicData(
  database: Database,
  clinic: ClinicContext,
  lines: AsyncIterable<Line> | Iterable<Line>,
  opts: WriteOptions,
): Promise<WriteOutcome> {
  const now = opts.now ?? Date.now;
  return database.writeTransaction(
    (trx) =>
      withBulkCache(trx, async () => {
        await checkReferencesAt(trx, opts.mode === 'insert' ? 'statement' : 'commit');
        await lockClinicData(trx, clinic.clinicId);
        await opts.extra?.before(trx);
        await createStaging(trx);

        const stager = new Stager(trx, clinic.timezone);
        for await (const l of lines) await stager.add(l);
        const staged = await stager.end();
        if (opts.mode === 'insert' && staged.deletions > 0) throw new Error('writeClinicData: deletions need upsert mode');

        let laterLines = 0;
        let dangling: WriteOutcome['dangling'] = { count: 0, onGoodLines: 0, first: [] };
        if (opts.mode === 'upsert') {
          const clientaDeletions = await deletesClientas(trx);
          laterLines = await markLaterReferences(trx, clinic.clinicId, clientaDeletions);
          if (laterLines + staged.badLines > 0) dangling = await danglingReferences(trx, clinic.clinicId, LISTED, clientaDeletions);
        }
        const refused = staged.badLines + dangling.count > 0;

        const at = Math.floor(now() / 1000);
        let done = 0;
        const ctx: ApplyContext = {
          db: trx,
          clinic,
          mode: opts.mode,
          at,
          counts: emptyCounts(),
          deltas: new CountChanges(),
          // Events of a write that will be rolled back would be made for nothing.
          events: opts.mode === 'upsert' && !refused ? new EventLog(trx, clinic, at) : null,
          laterLines,
          onLines: (n) => opts.onApply?.((done += n), staged.lines),
        };
        const missing = new MissingRecords(LISTED);
        if (!refused || staged.deletions > 0) {
          await applyInFileOrder(ctx, missing);
          await appendDeferred(ctx);
        }

        const ok = !refused && missing.count === 0;
        if (ok) await finish(ctx, (await opts.extra?.after(trx)) ?? false);
        await dropStaging(trx);
        return {
          ok,
          counts: ok ? ctx.counts : emptyCounts(),
          changed: ok && anyChange(ctx.counts),
          badLines: staged.badLines,
          dangling,
          missing: { count: missing.count, first: missing.first },
        };
      }),
    { keep: (outcome) => outcome.ok, waitMs: opts.waitMs },
  );
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

/** The count tables, the versions the lists' ETags and kept search totals compare with, and the listeners. */
async function finish(ctx: ApplyContext, extraChanged: boolean): Promise<void> {
  const { db, clinic, counts } = ctx;
  await ctx.deltas.apply(db, clinic.clinicId);
  if (anyChange(counts) || extraChanged) {
    await ensureDataVersions(db, clinic.clinicId);
    const c = counts.clientas;
    await bumpDataVersions(db, clinic.clinicId, extraChanged || c.created + c.updated + c.deleted > 0);
  }
  if ((ctx.events?.count ?? 0) > 0) await notifyEvents(db, clinic.clinicId);
}
