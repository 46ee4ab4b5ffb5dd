// Apply, the last step of a write, for a run of deletion lines of one type (in chunks): the
// records go, with a clienta's cascade (her citas deleted, her calls unlinked), the count tables
// follow, and each is an event: those that refer to her first, then she, so a copy applying them
// in order never holds a cita of a deleted clienta. Resolving found every deletion of nothing
// (repos/staging-deletions.ts); one found here is counted, and the write takes it for a fault.
import type { EventType } from '../../domain/records.js';
import { COLLECTIONS, NAME_OF, REFERRED, REFERRING } from '../../collections/index.js';
import { deleteRecords, deleteRecordsOf, storedIds, unlinkRecordsOf } from '../../repos/deletions.js';
import type { ApplyContext } from './apply.js';
import type { RecordType } from './rows.js';

/** A deletion line that names no record of the clinic (or one deleted earlier in the same run). */
export interface MissingRecord {
  line: number;
  type: RecordType;
  id: string;
  again: boolean;
}

/** The deletions that found nothing: how many, and the first `max` in line order. */
export class MissingRecords {
  count = 0;
  readonly first: MissingRecord[] = [];
  constructor(private readonly max: number) {}

  add(m: MissingRecord): void {
    this.count++;
    if (this.first.length < this.max) this.first.push(m);
  }
}

const gone = (type: RecordType, ids: string[]) => ids.map((id) => ({ id, tipo: `${type}.eliminada` as EventType }));

/** Applies deletion lines of one type, in line order. */
export async function applyDeletions(
  ctx: ApplyContext,
  missing: MissingRecords,
  type: RecordType,
  items: readonly { line: number; id: string }[],
): Promise<void> {
  const { db, clinic, deltas, counts, events } = ctx;
  const clinicId = clinic.clinicId;
  // The same id twice: the second finds nothing left to delete.
  const first = new Map<string, number>();
  for (const { id, line } of items) {
    if (first.has(id)) missing.add({ line, type, id, again: true });
    else first.set(id, line);
  }
  const ids = [...first.keys()];
  const found = (present: Set<string>) => {
    for (const [id, line] of first) if (!present.has(id)) missing.add({ line, type, id, again: false });
    return ids.filter((id) => present.has(id));
  };

  const name = NAME_OF[type];
  if (name !== REFERRED) {
    const rows = await deleteRecords(db, name, clinicId, ids);
    for (const r of rows) deltas.add(name, r, -1);
    const deleted = found(new Set(rows.map((r) => r.id)));
    counts[name].deleted += deleted.length;
    await events?.append(type, gone(type, deleted));
  } else {
    const doomed = found(await storedIds(db, name, clinicId, ids));
    // The records that refer to her go with her, or stay unlinked (a call, as an unknown caller's),
    // in write order; then she goes.
    for (const n of REFERRING) {
      const c = COLLECTIONS[n];
      if (c.deletedWithReferred) {
        const rows = await deleteRecordsOf(db, n, clinicId, doomed);
        for (const r of rows) deltas.add(n, r, -1);
        counts[n].deleted += rows.length;
        await events?.append(
          c.singular,
          gone(
            c.singular,
            rows.map((r) => r.id),
          ),
        );
      } else {
        const unlinked = await unlinkRecordsOf(db, n, clinicId, doomed, ctx.at);
        counts[n].updated += unlinked.length;
        await events?.append(
          c.singular,
          unlinked.map((id) => ({ id, tipo: `${c.singular}.actualizada` as EventType })),
        );
      }
    }
    const rows = await deleteRecords(db, name, clinicId, doomed);
    for (const r of rows) deltas.add(name, r, -1);
    counts[name].deleted += rows.length;
    await events?.append(type, gone(type, doomed));
  }
  ctx.onLines?.(items.length);
}
