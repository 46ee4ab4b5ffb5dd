// Apply, the last step of a write, for a run of deletion lines of one type (in chunks): the
// records go, with a clienta's cascade (her citas deleted, her calls unlinked), the count tables follow, and
// each is an event: citas, then calls, then clientas, so a copy applying them in order never
// holds a cita of a deleted clienta. A deletion that finds nothing is a problem of its line.
import type { EventType } from '../../domain/records.js';
import { deleteCitas, deleteCitasOf, deleteClientas, deleteLlamadas, storedClientaIds, unlinkLlamadasOf } from '../../repos/deletions.js';
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

  if (type === 'cita') {
    const rows = await deleteCitas(db, clinicId, ids);
    for (const r of rows) deltas.add('citas', r, -1);
    const deleted = found(new Set(rows.map((r) => r.id)));
    counts.citas.deleted += deleted.length;
    await events?.append('cita', gone('cita', deleted));
  } else if (type === 'llamada') {
    const rows = await deleteLlamadas(db, clinicId, ids);
    for (const r of rows) deltas.add('llamadas', r, -1);
    const deleted = found(new Set(rows.map((r) => r.id)));
    counts.llamadas.deleted += deleted.length;
    await events?.append('llamada', gone('llamada', deleted));
  } else {
    const doomed = found(await storedClientaIds(db, clinicId, ids));
    // Her citas go with her; her calls stay, as an unknown caller's; then she goes.
    const citas = await deleteCitasOf(db, clinicId, doomed);
    for (const r of citas) deltas.add('citas', r, -1);
    counts.citas.deleted += citas.length;
    await events?.append(
      'cita',
      gone(
        'cita',
        citas.map((r) => r.id),
      ),
    );
    const unlinked = await unlinkLlamadasOf(db, clinicId, doomed, ctx.at);
    counts.llamadas.updated += unlinked.length;
    await events?.append(
      'llamada',
      unlinked.map((id) => ({ id, tipo: 'llamada.actualizada' })),
    );
    const clientas = await deleteClientas(db, clinicId, doomed);
    for (const r of clientas) deltas.add('clientas', r, -1);
    counts.clientas.deleted += clientas.length;
    await events?.append('clienta', gone('clienta', doomed));
  }
  ctx.onLines?.(items.length);
}
