// What a write did, per record type, and the changes it makes to the per-day and per-vip count
// tables, kept in memory (one entry per day and status, not per row) and applied once at its end.
import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.js';
import type { Keys } from '../../repos/staging.js';
import { addDelta, applyCountDeltas, type CountDeltas, type RecordTable } from '../../repos/writes.js';

export interface TypeCounts {
  /** records new to the clinic */
  created: number;
  /** update events: a line whose record's values changed, and each record changed through its clienta */
  updated: number;
  /** records of the lines (one per id within a chunk) already stored as the line says */
  unchanged: number;
  /** records deleted, by their line or with their clienta */
  deleted: number;
}

/** Per type, what the writes did: created + updated + deleted is the number of that type's events. */
export type WriteCounts = Record<RecordTable, TypeCounts>;

export function emptyCounts(): WriteCounts {
  const zero = (): TypeCounts => ({ created: 0, updated: 0, unchanged: 0, deleted: 0 });
  return { clientas: zero(), citas: zero(), llamadas: zero() };
}

/** Something was created, updated or deleted (a write that changes nothing bumps no version and makes no event). */
export function anyChange(counts: WriteCounts): boolean {
  return Object.values(counts).some((c) => c.created + c.updated + c.deleted > 0);
}

/** Records written, whatever they did (the demo's counts). */
export function recordTotals(counts: WriteCounts): Record<RecordTable, number> {
  const t = (c: TypeCounts) => c.created + c.updated + c.unchanged;
  return { clientas: t(counts.clientas), citas: t(counts.citas), llamadas: t(counts.llamadas) };
}

const COUNT_TABLE = { clientas: 'clientas_por_vip', citas: 'citas_por_dia', llamadas: 'llamadas_por_dia' } as const;

/** A row's key in its count table. */
function countKey(table: RecordTable, r: Keys): (string | number)[] {
  if (table === 'clientas') return [Number(r.vip)];
  return table === 'citas' ? [String(r.dia), String(r.estado)] : [String(r.dia), String(r.resultado)];
}

/** The count tables' changes: -1 for a row's stored keys replaced or deleted, +1 for the keys written. */
export class CountChanges {
  private readonly deltas: Record<RecordTable, CountDeltas> = { clientas: new Map(), citas: new Map(), llamadas: new Map() };

  add(table: RecordTable, row: Keys, n: 1 | -1): void {
    addDelta(this.deltas[table], countKey(table, row), n);
  }

  async apply(db: Kysely<DB>, clinicId: string): Promise<void> {
    for (const table of ['clientas', 'citas', 'llamadas'] as const)
      await applyCountDeltas(db, clinicId, COUNT_TABLE[table], this.deltas[table]);
  }
}
