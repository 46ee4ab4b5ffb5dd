// Erasing a clienta's personal data (GDPR article 17): `clinic-api clientas erase`.
//
// One write, through the import's own path (services/write/session.ts), in one transaction under
// the clinic's lock (and SQLite's write lock, waited for asynchronously like an import's):
//
//   1. her records go as deletion lines of an import would take them: her calls first (those linked
//      to her, and those from one of her phones linked to no clienta: the caller's number is hers),
//      then she, with her citas (the import's cascade). Each deletion is an event (`*.eliminada`,
//      datos `{"id": ...}`), delivered to webhooks and the feed like any other.
//   2. every retained event of those records (she, her citas, her calls) has its datos reduced to
//      `{"id": ...}`; so has every other cita or call event whose datos show one of her phones
//      (a cita of hers deleted earlier, or a call later linked to someone else), found by the
//      exact JSON text `"telefono":"+34..."` / `"telefono_caller":"+34..."`. A name alone is not
//      looked for: two people share names, and her name is never stored without her phone.
//   3. the clinic's data versions are bumped in the same transaction: every instance's page cache
//      and search totals are keyed by them (read from the database on every request), so no
//      instance serves a copy made before; the feed's tags and the webhook worker read them too.
//
// Her phones are those of her record and of every retained event of hers (she may have changed it).
// A re-run finds nothing left and says so. Nothing is written for an unknown clinic or clienta.
import { inWriteOrder, type CollectionName } from '../collections/index.js';
import type { Database } from '../db/connect.js';
import { DomainError } from '../errors.js';
import { getClinic } from '../repos/clinics.js';
import {
  citaIdsOf,
  clientaEventDatos,
  clientaIdentity,
  eventsHolding,
  eventsOfRecords,
  hasClientaEvents,
  llamadaIdsOf,
  pendingDeliveriesOf,
  setEventDatos,
  type EventToScrub,
} from '../repos/erasure.js';
import { clinicWrite, type Line } from './write/session.js';

export interface ErasureResult {
  /** records deleted, by type (her citas with her, her calls before her) */
  deleted: Record<CollectionName, number>;
  /** past events whose datos were reduced to the record's id */
  eventsScrubbed: number;
  /** deliveries of those events that webhook endpoints had not made yet (they now carry the id only) */
  pendingDeliveries: number;
  /** false: there was nothing left to erase */
  changed: boolean;
}

export interface ErasureOptions {
  /** wall clock in ms: the time of the deletion events */
  now?: () => number;
}

/** Her phones: of her record and of every retained event of hers (the API's E.164 text). */
export function phonesOf(current: string | undefined, datos: readonly string[]): string[] {
  const phones = new Set<string>();
  if (current) phones.add(current);
  for (const d of datos) {
    const t = (JSON.parse(d) as { telefono?: unknown }).telefono;
    if (typeof t === 'string' && t !== '') phones.add(t);
  }
  return [...phones];
}

/** The exact JSON text of a phone as a cita's or a call's datos hold it. */
const phoneFragments = (phones: readonly string[]) =>
  phones.flatMap((p) => [`"telefono":${JSON.stringify(p)}`, `"telefono_caller":${JSON.stringify(p)}`]);

export async function eraseClienta(
  database: Database,
  clinicId: string,
  clientaId: string,
  opts: ErasureOptions = {},
): Promise<ErasureResult> {
  const clinic = await getClinic(database.db, clinicId);
  if (!clinic)
    throw new DomainError('not_found', `no clinic with id ${clinicId} (clinic-api clinics list shows the ids); nothing was changed`, {
      field: 'clinic',
    });
  const db = database.db;
  if (!(await clientaIdentity(db, clinicId, clientaId)) && !(await hasClientaEvents(db, clinicId, clientaId)))
    throw new DomainError(
      'not_found',
      `clinic ${clinicId} has no clienta ${clientaId}, now or in its event log; nothing was changed (the id is the clienta's "id" in the ` +
        `API)`,
      { field: 'clienta' },
    );

  const ctx = { clinicId: clinic.id, timezone: clinic.timezone, currency: clinic.currency };
  // A caller of the write like the import: under the clinic's lock it decides its deletion lines,
  // writes them, then scrubs the events in the same transaction.
  const { out, scrubbed, pendingDeliveries } = await clinicWrite(
    database,
    ctx,
    'upsert',
    async (w) => {
      const trx = w.trx;
      const her = await clientaIdentity(trx, clinicId, clientaId);
      const phones = phonesOf(her?.telefono, await clientaEventDatos(trx, clinicId, clientaId));
      const citas = await citaIdsOf(trx, clinicId, clientaId);
      const llamadas = await llamadaIdsOf(trx, clinicId, clientaId, phones);
      const recordIds = [clientaId, ...citas, ...llamadas];
      let line = 0;
      const lines: Line[] = llamadas.map((id) => ({ line: ++line, deletion: { type: 'llamada', id, deleted: true } }) as const);
      if (her) lines.push({ line: ++line, deletion: { type: 'clienta', id: clientaId, deleted: true } });

      const out = await w.write(lines, { now: opts.now });
      const scrubbed: EventToScrub[] = [];
      if (!out.ok) return { out, scrubbed, pendingDeliveries: 0 };
      const found = new Map<number, EventToScrub>();
      for (const e of await eventsOfRecords(trx, clinicId, recordIds)) found.set(e.seq, e);
      for (const e of await eventsHolding(trx, clinicId, phoneFragments(phones))) found.set(e.seq, e);
      for (const e of found.values()) {
        const reduced = JSON.stringify({ id: e.record_id });
        if (e.datos === reduced) continue;
        await setEventDatos(trx, clinicId, e.seq, reduced);
        scrubbed.push(e);
      }
      if (scrubbed.length > 0) w.changedMore();
      return { out, scrubbed, pendingDeliveries: await pendingDeliveriesOf(trx, clinicId, scrubbed) };
    },
    (r) => r.out.ok,
  );
  // Deletions of what this same transaction found cannot miss: anything else is a fault.
  if (!out.ok) throw new Error(`erasure of clienta ${clientaId}: the deletion was refused; nothing was changed`);
  const deleted = inWriteOrder((c) => out.counts[c.name].deleted);
  return {
    deleted,
    eventsScrubbed: scrubbed.length,
    pendingDeliveries,
    changed: Object.values(deleted).some((n) => n > 0) || scrubbed.length > 0,
  };
}
