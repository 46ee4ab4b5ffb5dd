// What a write did, per record type, and the changes it makes to the per-day and per-vip count
// tables, kept in memory (one entry per day and status, not per row) and applied once at its end.
import type { Kysely } from 'kysely';
import { COLLECTIONS, inWriteOrder, WRITE_ORDER } from '../../collections/index.js';
import type { DB } from '../../db/schema.js';
import type { Keys } from '../../repos/staging.js';
import { addDelta, applyCountDeltas, type CountDeltas, type RecordTable } from '../../repos/writes.js';

export interface TypeCounts {
  /** records new to the clinic */
  created: number;
  /** update events: a line whose record's values changed, and each record changed through the one it refers to */
  updated: number;
  /** records of the lines (one per id within a chunk) already stored as the line says */
  unchanged: number;
  /** records deleted, by their line or with the one they refer to */
  deleted: number;
}

/** Per type, what the writes did: created + updated + deleted is the number of that type's events. */
export type WriteCounts = Record<RecordTable, TypeCounts>;

export function emptyCounts(): WriteCounts {
  const zero = (): TypeCounts => ({ created: 0, updated: 0, unchanged: 0, deleted: 0 });
  return inWriteOrder(zero);
}

/** Something was created, updated or deleted (a write that changes nothing bumps no version and makes no event). */
export function anyChange(counts: WriteCounts): boolean {
  return Object.values(counts).some((c) => c.created + c.updated + c.deleted > 0);
}

/** Records written, whatever they did (the demo's counts). */
export function recordTotals(counts: WriteCounts): Record<RecordTable, number> {
  const t = (c: TypeCounts) => c.created + c.updated + c.unchanged;
  return inWriteOrder((c) => t(counts[c.name]));
}

/** Each count table's key columns, each read as its column's type (an integer column as a number). */
const COUNT_KEYS = inWriteOrder((c) => {
  const integer = (col: string) => c.columns.some(([name, type]) => name === col && type !== 'text');
  return c.counts.by.map((col): [string, (v: unknown) => string | number] => [col, integer(col) ? Number : String]);
});

/** A row's key in its count table. */
function countKey(table: RecordTable, r: Keys): (string | number)[] {
  return COUNT_KEYS[table].map(([col, as]) => as(r[col]));
}

/** The count tables' changes: -1 for a row's stored keys replaced or deleted, +1 for the keys written. */
export class CountChanges {
  private readonly deltas = inWriteOrder((): CountDeltas => new Map());

  add(table: RecordTable, row: Keys, n: 1 | -1): void {
    addDelta(this.deltas[table], countKey(table, row), n);
  }

  async apply(db: Kysely<DB>, clinicId: string): Promise<void> {
    for (const table of WRITE_ORDER) await applyCountDeltas(db, clinicId, COLLECTIONS[table].counts.table, this.deltas[table]);
  }
}
