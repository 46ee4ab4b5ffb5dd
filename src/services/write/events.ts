// The events of a write (docs/architecture.md, "Following changes"): each numbered in the clinic's
// log, in the order the writes happened, and stored with its record as the lists show it at that
// moment, read back by the lists' own queries and shaped by their own functions (shape.ts). A
// deletion's event holds the id only.
import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import { NAME_OF, REFERRED, SINGULAR_OF } from '../../collections/index.js';
import { dialectOf, type Dialect } from '../../db/dialect.js';
import type { DB } from '../../db/schema.js';
import type { EventType } from '../../domain/records.js';
import { ensureDataVersions } from '../../repos/clinics.js';
import { insertEvents, takeSeqs, type EventRow } from '../../repos/events.js';
import { storedJson } from '../records.js';
import type { ClinicContext } from '../shape.js';
import type { RecordType } from './rows.js';

export interface PendingEvent {
  id: string;
  tipo: EventType;
}

/**
 * Records read back per query. PostgreSQL takes the ids as one array and joins the clientas once
 * per query, so fewer, larger reads; SQLite binds each id.
 */
const READ_BACK: Record<Dialect, number> = { sqlite: 1_000, postgres: 5_000 };

export class EventLog {
  private versionsReady = false;
  private stored = 0;

  constructor(
    private readonly db: Kysely<DB>,
    private readonly clinic: ClinicContext,
    /** the time of the write (epoch seconds): each event's ocurrido_at, each changed record's updated_at */
    private readonly at: number,
  ) {}

  /** Events stored so far. */
  get count(): number {
    return this.stored;
  }

  /**
   * Numbers `n` events now, for records whose `datos` can only be read later (a clienta's derived
   * fields count the citas and calls written after her): the first seq, for append().
   */
  async reserve(n: number): Promise<number> {
    if (!this.versionsReady) {
      await ensureDataVersions(this.db, this.clinic.clinicId);
      this.versionsReady = true;
    }
    return n === 0 ? 0 : takeSeqs(this.db, this.clinic.clinicId, n);
  }

  /**
   * Stores events of one record type, numbered from `first` (reserved) or next in the log, each
   * with its record as the lists show it now. `ifStillThere`: events of records that may be gone
   * since (deleted further down the file) are dropped for those, else a record not found is a fault.
   */
  async append(type: RecordType, events: readonly PendingEvent[], first?: number, ifStillThere = false): Promise<void> {
    const step = READ_BACK[dialectOf(this.db)];
    for (let i = 0; i < events.length; i += step) {
      let chunk = events.slice(i, i + step);
      const datos = await storedJson(
        this.db,
        this.clinic,
        NAME_OF[type],
        chunk.filter((e) => !e.tipo.endsWith('.eliminada')).map((e) => e.id),
        this.at,
      );
      if (ifStillThere) chunk = chunk.filter((e) => e.tipo.endsWith('.eliminada') || datos.has(e.id));
      if (chunk.length === 0) continue;
      let seq = first === undefined ? await this.reserve(chunk.length) : first + i;
      const rows: EventRow[] = chunk.map((e) => {
        const read = datos.get(e.id);
        const d = e.tipo.endsWith('.eliminada') ? JSON.stringify({ id: e.id }) : read?.json;
        // A record written or changed a moment ago is there to read: anything else is a fault of the writer.
        if (d === undefined) throw new Error(`event ${e.tipo} of ${e.id}: the record cannot be read back`);
        // Whom the event discloses (the request log's access record): her own events, else the
        // record's clienta as read back (a deleted cita's or call's is no longer known: it holds the id only).
        const clienta = type === SINGULAR_OF[REFERRED] ? e.id : (read?.clienta ?? null);
        return {
          clinic_id: this.clinic.clinicId,
          seq: seq++,
          id: randomUUID(),
          tipo: e.tipo,
          record_id: e.id,
          ocurrido_at: this.at,
          datos: d,
          clienta_id: clienta,
        };
      });
      await insertEvents(this.db, rows);
      this.stored += rows.length;
    }
  }
}
