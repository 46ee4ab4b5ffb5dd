// Apply, the last step of a write (validate, resolve, apply), for the lines between two runs of
// deletions (or the whole file): each collection applied from the staging tables in SQL, in write
// order (the one referred to first), a chunk of lines at a time. Each chunk's write returns the
// rows it wrote (new or changed); the stored keys read just before it tell new from changed and
// what the count tables lose. The referred-to first means that a record finds the clienta the same
// stretch of the file lists after it.
import type { Kysely } from 'kysely';
import { COLLECTIONS, REFERRED, REFERRING, SINGULAR_OF, WRITE_ORDER, type ReferringName } from '../../collections/index.js';
import type { DB } from '../../db/schema.js';
import type { EventType } from '../../domain/records.js';
import { touchRecordsOf } from '../../repos/deletions.js';
import { laterIds } from '../../repos/staging-references.js';
import { markedEvents, markEvents, nextChunk, storedKeys, writeStaged, type Keys } from '../../repos/staging.js';
import type { RecordTable } from '../../repos/writes.js';
import type { ClinicContext } from '../shape.js';
import type { CountChanges, WriteCounts } from './counts.js';
import type { EventLog } from './events.js';
import type { RecordType } from './rows.js';

/** Lines of one record type written per statement: big statements, bounded memory. */
export const CHUNK = 5_000;
/** Past the last line of any file. */
export const LAST_LINE = Number.MAX_SAFE_INTEGER;

/** What every part of the apply step shares: the transaction, the clinic, the time, and what it adds up. */
export interface ApplyContext {
  db: Kysely<DB>;
  clinic: ClinicContext;
  /** 'insert': rows known to be new (a fresh demo clinic); 'upsert': by id, only what differs */
  mode: 'insert' | 'upsert';
  /** epoch seconds: updated_at of what changes, ocurrido_at of its events */
  at: number;
  counts: WriteCounts;
  deltas: CountChanges;
  /** null: no events (the demo's insert) */
  events: EventLog | null;
  /** staged records whose clienta the file lists further down (their events wait for the end) */
  laterLines: number;
  /** called with the lines applied so far */
  onLines?: (n: number) => void;
}

const TYPE_OF = SINGULAR_OF;

/** Applies the staged records of lines (after, through]. */
export async function applyRecords(ctx: ApplyContext, after: number, through: number): Promise<void> {
  // A clienta's datos count the records written after her that refer to her: her events are
  // numbered when she is written (before theirs), kept on her staged line, and stored once the
  // stretch's other records are written. Per chunk: its lines and its first seq.
  const clientaChunks: { after: number; last: number; first: number }[] = [];
  for (const table of WRITE_ORDER) {
    for (let from = after; ;) {
      const chunk = await nextChunk(ctx.db, table, from, through, CHUNK);
      if (chunk === null) break;
      const written = await writeChunk(ctx, table, from, chunk.last);
      ctx.onLines?.(chunk.lines);
      if (table === REFERRED) {
        if (ctx.events && written.length > 0) {
          await keepEvents(ctx, table, written, from, chunk.last);
          clientaChunks.push({ after: from, last: chunk.last, first: await ctx.events.reserve(written.length) });
        }
        await cascade(ctx, written);
      } else if (ctx.events) {
        await appendEvents(ctx, table as ReferringName, written, from, chunk.last);
      }
      from = chunk.last;
    }
  }
  // In line order, as numbered: one event per written clienta, on the last line of her id in its chunk.
  for (const c of clientaChunks) {
    const events = await markedEvents(ctx.db, REFERRED, c.after, c.last, CHUNK);
    await ctx.events!.append(
      TYPE_OF[REFERRED],
      events.map((e) => ({ id: e.id, tipo: e.tipo as EventType })),
      c.first,
    );
  }
}

const tipo = (type: RecordType, existed: boolean): EventType => (existed ? `${type}.actualizada` : `${type}.creada`);

type Written = { row: Keys; existed: Keys | undefined }[];

/** Keeps the events of rows a chunk (after, through] wrote on their staged lines. */
async function keepEvents(ctx: ApplyContext, table: RecordTable, written: Written, after: number, through: number): Promise<void> {
  const type = TYPE_OF[table];
  for (const existed of [false, true]) {
    const ids = written.filter((w) => (w.existed !== undefined) === existed).map((w) => w.row.id);
    if (ids.length > 0) await markEvents(ctx.db, table, tipo(type, existed), after, through, ids);
  }
}

/**
 * The events of a chunk of records that refer, now; those of lines whose clienta the file lists
 * further down (`later`) wait on their staged line for the end of the import (appendDeferred).
 */
async function appendEvents(ctx: ApplyContext, table: ReferringName, written: Written, after: number, through: number) {
  const later = ctx.laterLines > 0 ? await laterIds(ctx.db, table, after, through) : new Set<string>();
  const now = written.filter((w) => !later.has(w.row.id));
  await ctx.events!.append(
    TYPE_OF[table],
    now.map(({ row, existed }) => ({ id: row.id, tipo: tipo(TYPE_OF[table], existed !== undefined) })),
  );
  if (now.length < written.length)
    await keepEvents(
      ctx,
      table,
      written.filter((w) => later.has(w.row.id)),
      after,
      through,
    );
}

/**
 * At the end of the import, the events of records listed before their clienta, in line order,
 * each showing the record as it is then (with her name); none for a record deleted since.
 */
export async function appendDeferred(ctx: ApplyContext): Promise<void> {
  if (ctx.laterLines === 0 || ctx.events === null) return;
  for (const table of REFERRING) {
    for (let after = 0; ;) {
      const rows = await markedEvents(ctx.db, table, after, LAST_LINE, CHUNK);
      if (rows.length === 0) break;
      await ctx.events.append(
        TYPE_OF[table],
        rows.map((r) => ({ id: r.id, tipo: r.tipo as EventType })),
        undefined,
        true,
      );
      after = rows[rows.length - 1]!.line;
    }
  }
}

/** Writes the staged lines (after, through] of `table`: the rows written, each with its stored keys before. */
async function writeChunk(ctx: ApplyContext, table: RecordTable, after: number, through: number): Promise<Written> {
  const { db, clinic, counts, deltas } = ctx;
  const before = new Map<string, Keys>();
  if (ctx.mode === 'upsert') for (const r of await storedKeys(db, table, clinic.clinicId, after, through)) before.set(r.id, r);
  const rows = await writeStaged(db, table, ctx.mode, clinic.clinicId, ctx.at, after, through);
  const c = counts[table];
  const written = rows.map((row) => {
    const existed = before.get(row.id);
    if (existed) {
      deltas.add(table, existed, -1);
      c.updated++;
    } else c.created++;
    deltas.add(table, row, 1);
    return { row, existed };
  });
  // Every record the chunk names was stored before (read above) or is new (and written): the
  // stored ones not written are the unchanged.
  c.unchanged += before.size - written.filter((w) => w.existed).length;
  return written;
}

/**
 * What the API shows of a clienta in the records that refer to her (each collection's
 * showsOfReferred: a cita her name and phone, a call her name) changed with her: their updated_at
 * moves and each is an update event, right after her write (before the records of the same
 * stretch, whose own changes then follow as their own events).
 */
async function cascade(ctx: ApplyContext, clientas: Written): Promise<void> {
  const { db, clinic, at } = ctx;
  for (const table of REFERRING) {
    // By the first shown field that changed (a new name before a new phone only).
    const shows = COLLECTIONS[table].showsOfReferred;
    const changed = shows.flatMap((f, i) =>
      clientas.filter(({ row, existed }) => existed && existed[f] !== row[f] && shows.slice(0, i).every((g) => existed[g] === row[g])),
    );
    if (changed.length === 0) continue;
    const touched = await touchRecordsOf(
      db,
      table,
      clinic.clinicId,
      changed.map((w) => w.row.id),
      at,
    );
    ctx.counts[table].updated += touched.length;
    await ctx.events?.append(
      TYPE_OF[table],
      touched.map((id) => ({ id, tipo: tipo(TYPE_OF[table], true) })),
    );
  }
}
