// Phase three of a write, for the lines between two runs of deletions (or the whole file): each
// record type applied from the staging tables in SQL, clientas first, then citas, then calls, a
// chunk of lines at a time. Each chunk's write returns the rows it wrote (new or changed); the
// stored keys read just before it tell new from changed and what the count tables lose. Clientas
// first means that a cita or call finds the clienta the same stretch of the file lists after it.
import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.js';
import type { EventType } from '../../domain/records.js';
import { touchRecordsOf } from '../../repos/deletions.js';
import { deferEvents, deferredEvents, laterLines } from '../../repos/staging-references.js';
import { nextChunk, STAGED, storedKeys, writeStaged, type Keys } from '../../repos/staging.js';
import type { RecordTable } from '../../repos/writes.js';
import type { ClinicContext } from '../shape.js';
import type { CountChanges, WriteCounts } from './counts.js';
import type { EventLog, PendingEvent } from './events.js';
import type { RecordType } from './rows.js';

/** Lines of one record type written per statement: big statements, bounded memory. */
export const CHUNK = 5_000;

/** What every step of phase three shares: the transaction, the clinic, the time, and what it adds up. */
export interface ApplyContext {
  db: Kysely<DB>;
  clinic: ClinicContext;
  /** 'insert': rows known to be new (a fresh demo clinic); 'upsert': by id, only what differs */
  mode: 'insert' | 'upsert';
  /** epoch seconds: updated_at of what changes, ocurrido_at of its events */
  at: number;
  counts: WriteCounts;
  deltas: CountChanges;
  /** null: no events (the demo's insert, or a write that will be rolled back) */
  events: EventLog | null;
  /** staged citas and calls whose clienta the file lists further down (their events wait for the end) */
  laterLines: number;
  /** called with the lines applied so far */
  onLines?: (n: number) => void;
}

const TYPE_OF = { clientas: 'clienta', citas: 'cita', llamadas: 'llamada' } as const satisfies Record<RecordTable, RecordType>;

/** Applies the staged records of lines (after, through]. */
export async function applyRecords(ctx: ApplyContext, after: number, through: number): Promise<void> {
  // A clienta's datos count the citas and calls written after her: her events are numbered now
  // (before her citas' and calls') and stored once the stretch's citas and calls are written.
  const clientaEvents: { first: number; events: PendingEvent[] }[] = [];
  for (const table of ['clientas', 'citas', 'llamadas'] as const) {
    for (let from = after; ;) {
      const chunk = await nextChunk(ctx.db, table, from, through, CHUNK);
      if (chunk === null) break;
      const written = await writeChunk(ctx, table, from, chunk.last);
      ctx.onLines?.(chunk.lines);
      if (table === 'clientas') {
        const events = written.map(({ row, existed }) => ({ id: row.id, tipo: tipo('clienta', existed) }));
        if (ctx.events) clientaEvents.push({ first: await ctx.events.reserve(events.length), events });
        await cascade(ctx, written);
      } else if (ctx.events) {
        await appendEvents(ctx, table, written, from, chunk.last);
      }
      from = chunk.last;
    }
  }
  for (const { first, events } of clientaEvents) await ctx.events?.append('clienta', events, first);
}

const tipo = (type: RecordType, existed: Keys | undefined): EventType => (existed ? `${type}.actualizada` : `${type}.creada`);

type Written = { row: Keys; existed: Keys | undefined }[];

/**
 * The events of a chunk of citas or calls, now; those of lines whose clienta the file lists
 * further down (`later`) wait on their staged line for the end of the import (appendDeferred).
 */
async function appendEvents(ctx: ApplyContext, table: 'citas' | 'llamadas', written: Written, after: number, through: number) {
  const type = TYPE_OF[table];
  const later = ctx.laterLines > 0 ? await laterLines(ctx.db, STAGED[table], after, through) : new Map<string, number>();
  const now: PendingEvent[] = [];
  const deferred = { creada: [] as number[], actualizada: [] as number[] };
  for (const { row, existed } of written) {
    const line = later.get(row.id);
    if (line === undefined) now.push({ id: row.id, tipo: tipo(type, existed) });
    else deferred[existed ? 'actualizada' : 'creada'].push(line);
  }
  await ctx.events!.append(type, now);
  for (const what of ['creada', 'actualizada'] as const) await deferEvents(ctx.db, STAGED[table], `${type}.${what}`, deferred[what]);
}

/**
 * At the end of the import, the events of citas and calls listed before their clienta, in line
 * order, each showing the record as it is then (with her name); none for a record deleted since.
 */
export async function appendDeferred(ctx: ApplyContext): Promise<void> {
  if (ctx.laterLines === 0 || ctx.events === null) return;
  for (const table of ['citas', 'llamadas'] as const) {
    for (let after = 0; ;) {
      const rows = await deferredEvents(ctx.db, STAGED[table], after, CHUNK);
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
 * What the API shows of a clienta in her citas (name and phone) and calls (name) changed with
 * her: their updated_at moves and each is an update event, right after her write (before the
 * citas and calls of the same stretch, whose own changes then follow as their own events).
 */
async function cascade(ctx: ApplyContext, clientas: Written): Promise<void> {
  const renamed: string[] = [];
  const rephoned: string[] = [];
  for (const { row, existed } of clientas) {
    if (!existed) continue;
    if (existed.nombre !== row.nombre) renamed.push(row.id);
    else if (existed.telefono !== row.telefono) rephoned.push(row.id);
  }
  if (renamed.length + rephoned.length === 0) return;
  const { db, clinic, at } = ctx;
  const citas = await touchRecordsOf(db, 'citas', clinic.clinicId, [...renamed, ...rephoned], at);
  const llamadas = await touchRecordsOf(db, 'llamadas', clinic.clinicId, renamed, at);
  ctx.counts.citas.updated += citas.length;
  ctx.counts.llamadas.updated += llamadas.length;
  await ctx.events?.append(
    'cita',
    citas.map((id) => ({ id, tipo: 'cita.actualizada' })),
  );
  await ctx.events?.append(
    'llamada',
    llamadas.map((id) => ({ id, tipo: 'llamada.actualizada' })),
  );
}
