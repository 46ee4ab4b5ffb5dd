// Turns import-format records into rows (search keys, local day, cents) and writes them in
// batches, with the event log: one event per record created, changed or deleted, written in the
// same transaction. Import and demo generation share it, so both store data exactly alike.
//
// Change or no change is decided by the database: an upsert rewrites only rows whose values
// differ and RETURNING names them; the stored keys read before each batch say which existed
// (created vs updated). Events are made per batch (memory stays a batch, whatever the file), in an
// order a mirror can apply: upserts clientas -> citas -> llamadas; deletions citas -> llamadas
// (their cascade updates) -> clientas. Each event's `datos` is the record as the API shows it,
// shaped by the lists' own code (shape.ts): a cita or call the batch wrote is shaped from the row
// it wrote (only its clienta's name and phone are looked up), anything else is read back.
import { randomUUID } from 'node:crypto';
import type { Insertable, Kysely } from 'kysely';
import { dialectOf, type Dialect } from '../db/dialect.js';
import type { CitasTable, ClientasTable, DB, LlamadasTable } from '../db/schema.js';
import type { CitaRecord, ClientaRecord, EventType, ImportRecord, LlamadaRecord } from '../domain/records.js';
import { citasByIds } from '../repos/citas.js';
import { clientaNames, clientasByIds } from '../repos/clientas.js';
import { bumpDataVersions, ensureDataVersions } from '../repos/clinics.js';
import { insertEvents, notifyEvents, takeSeqs, type EventRow } from '../repos/events.js';
import { llamadasByIds } from '../repos/llamadas.js';
import {
  addDelta,
  applyCountDeltas,
  deleteCitas,
  deleteCitasOf,
  deleteClientas,
  deleteLlamadas,
  dropPendingEvents,
  parkEvents,
  pendingEvents,
  storedCitaKeys,
  storedClientaKeys,
  storedLlamadaKeys,
  touchRecordsOf,
  unlinkLlamadasOf,
  writeCitas,
  writeClientas,
  writeLlamadas,
  type CountDeltas,
  type WriteMode,
} from '../repos/writes.js';
import { localDate } from '../time.js';
import { normalizeName, phoneDigits } from './normalize.js';
import { citaOut, clientaOut, llamadaOut, type ClinicContext } from './shape.js';

export type RecordType = 'clienta' | 'cita' | 'llamada';

export function clientaRow(clinicId: string, r: ClientaRecord, updatedAt: number): Insertable<ClientasTable> {
  return {
    clinic_id: clinicId,
    id: r.id,
    nombre: r.nombre,
    nombre_norm: normalizeName(r.nombre),
    telefono: r.telefono,
    telefono_digits: phoneDigits(r.telefono),
    email: r.email,
    idioma: r.idioma,
    vip: r.vip ? 1 : 0,
    cliente_desde: r.cliente_desde,
    created_at: r.created_at,
    updated_at: updatedAt,
  };
}

/**
 * localDate() through a cache of 15-minute buckets: a time-zone look-up per row is the largest
 * cost of writing a million rows after the database itself. Every zone offset in use is a whole
 * number of quarter hours, so a bucket whose first and last second fall on the same local date
 * lies wholly in it; a bucket that straddles a local midnight is computed row by row.
 */
export class LocalDays {
  private readonly cache = new Map<number, string | null>();
  constructor(private readonly zone: string) {}

  of(epochSeconds: number): string {
    const bucket = Math.floor(epochSeconds / 900);
    let day = this.cache.get(bucket);
    if (day === undefined) {
      const first = localDate(bucket * 900, this.zone);
      day = first === localDate(bucket * 900 + 899, this.zone) ? first : null;
      if (this.cache.size > 100_000) this.cache.clear();
      this.cache.set(bucket, day);
    }
    return day ?? localDate(epochSeconds, this.zone);
  }
}

export function citaRow(clinicId: string, zone: string | LocalDays, r: CitaRecord, updatedAt: number): Insertable<CitasTable> {
  const dia = typeof zone === 'string' ? localDate(r.fecha_hora, zone) : zone.of(r.fecha_hora);
  return {
    clinic_id: clinicId,
    id: r.id,
    clienta_id: r.clienta_id,
    fecha_hora: r.fecha_hora,
    dia,
    servicio: r.servicio,
    duracion_min: r.duracion_min,
    precio_cents: r.precio_cents,
    estado: r.estado,
    profesional_nombre: r.profesional_nombre,
    sede_nombre: r.sede_nombre,
    notas: r.notas,
    created_at: r.created_at,
    updated_at: updatedAt,
  };
}

export function llamadaRow(clinicId: string, zone: string | LocalDays, r: LlamadaRecord, updatedAt: number): Insertable<LlamadasTable> {
  const dia = typeof zone === 'string' ? localDate(r.fecha_hora, zone) : zone.of(r.fecha_hora);
  return {
    clinic_id: clinicId,
    id: r.id,
    clienta_id: r.clienta_id,
    fecha_hora: r.fecha_hora,
    dia,
    cliente_nombre: r.cliente_nombre,
    telefono_caller: r.telefono_caller,
    duracion_segundos: r.duracion_segundos,
    resultado: r.resultado,
    idioma: r.idioma,
    created_at: r.created_at,
    updated_at: updatedAt,
  };
}

type Names = Map<string, { nombre: string; telefono: string }>;

/** The JSON of a cita as written (what citasByIds would read), or undefined while her clienta is not stored. */
function heldCita(r: Insertable<CitasTable>, names: Names, clinic: ClinicContext): string | undefined {
  const cl = names.get(r.clienta_id);
  if (cl === undefined) return undefined;
  return JSON.stringify(
    citaOut(
      {
        id: r.id,
        fecha_hora: r.fecha_hora,
        cliente_nombre: cl.nombre,
        telefono: cl.telefono,
        servicio: r.servicio,
        duracion_min: r.duracion_min,
        precio_cents: r.precio_cents,
        estado: r.estado,
        profesional_nombre: r.profesional_nombre,
        sede_nombre: r.sede_nombre,
        notas: r.notas ?? null,
        created_at: r.created_at,
        updated_at: r.updated_at,
      },
      clinic,
    ),
  );
}

/** The JSON of a call as written (what llamadasByIds would read), or undefined while its linked clienta is not stored. */
function heldLlamada(r: Insertable<LlamadasTable>, names: Names, clinic: ClinicContext): string | undefined {
  let nombre = r.cliente_nombre ?? null;
  if (r.clienta_id != null) {
    const cl = names.get(r.clienta_id);
    if (cl === undefined) return undefined;
    nombre = cl.nombre;
  }
  return JSON.stringify(
    llamadaOut(
      {
        id: r.id,
        fecha_hora: r.fecha_hora,
        cliente_nombre: nombre,
        telefono_caller: r.telefono_caller,
        duracion_segundos: r.duracion_segundos,
        resultado: r.resultado,
        idioma: r.idioma,
        created_at: r.created_at,
        updated_at: r.updated_at,
      },
      clinic,
    ),
  );
}

/** Keeps the last row per id: one INSERT ... ON CONFLICT may not touch a row twice. */
function lastPerId<T extends { id: string }>(rows: T[]): T[] {
  const byId = new Map<string, T>();
  for (const r of rows) byId.set(r.id, r);
  return byId.size === rows.length ? rows : [...byId.values()];
}

/** Clientas' names kept for the events of their citas and calls (about 100 bytes each). */
const NAMES_KEPT = 200_000;

/** Records (or deletions) buffered before a write: big statements, bounded memory. */
const FLUSH_AT = 5_000;
/**
 * Records read back per query to render events' datos. PostgreSQL takes the ids as one array and
 * joins the clientas once per query, so fewer, larger reads; SQLite binds each id.
 */
const RENDER_CHUNK: Record<Dialect, number> = { sqlite: 1_000, postgres: 5_000 };

export interface TypeCounts {
  created: number;
  updated: number;
  unchanged: number;
  deleted: number;
}

/** Per type, what the writes did: created + updated + deleted is the number of that type's events. */
export type WriteCounts = Record<'clientas' | 'citas' | 'llamadas', TypeCounts>;

const PLURAL = { clienta: 'clientas', cita: 'citas', llamada: 'llamadas' } as const;

export function emptyCounts(): WriteCounts {
  const zero = (): TypeCounts => ({ created: 0, updated: 0, unchanged: 0, deleted: 0 });
  return { clientas: zero(), citas: zero(), llamadas: zero() };
}

/** A deletion line that names no record of the clinic (or one deleted earlier in the file). */
export interface MissingRecord {
  line: number;
  type: RecordType;
  id: string;
  /** deleted earlier in the same file */
  again: boolean;
}

export interface RecordWriterOptions {
  /** 'insert': rows known to be new (a fresh demo clinic), no events; 'upsert' (default): import, with events */
  mode?: WriteMode;
  /** wall clock in ms: the time of the events and of updated_at */
  now?: () => number;
  /** a deletion names a record that does not exist: an error of that line */
  onMissing?: (m: MissingRecord) => void;
}

/** Rows a batch wrote, by id: exactly what is stored, so their events need not read them back. */
type Held = Map<string, Insertable<CitasTable> | Insertable<LlamadasTable>>;

/** Events of one write, in the order they will be numbered. */
type Section = { type: RecordType; events: { id: string; tipo: EventType }[]; held?: Held };

/**
 * Buffers rows and writes them in batches. The per-day and per-vip counts are kept as deltas in
 * memory (one entry per day and status, not per row) and applied once by finish(): in 'upsert'
 * mode each batch first reads the stored day/status of the rows it replaces, so the counts stay
 * exact for re-imports and changed rows without recounting the clinic.
 */
export class RecordWriter {
  private clientas: Insertable<ClientasTable>[] = [];
  private citas: Insertable<CitasTable>[] = [];
  private llamadas: Insertable<LlamadasTable>[] = [];
  private deletions: { type: RecordType; items: { id: string; line: number }[] } | null = null;
  private readonly deltas = { citas: new Map() as CountDeltas, llamadas: new Map() as CountDeltas, clientas: new Map() as CountDeltas };
  readonly counts: WriteCounts = emptyCounts();
  private readonly days: LocalDays;
  private readonly mode: WriteMode;
  private readonly now: () => number;
  private readonly onMissing: (m: MissingRecord) => void;
  /** Events are not made once the caller knows the transaction will roll back (a bad import line). */
  discardEvents = false;
  private versionsReady = false;
  private parked = 0;
  private emitted = 0;
  /**
   * Name and phone of clientas as stored now, kept from the rows this import wrote (an unchanged
   * row equals what is stored) and from look-ups: the events of their citas and calls show them.
   * Only this writer changes the clinic's data during the import (its writer lock), so it stays
   * true; a deleted clienta leaves it. Bounded: cleared when it grows past NAMES_KEPT.
   */
  private readonly names: Names = new Map();
  /** The batch being written: PostgreSQL stores it while the caller produces the next one. */
  private inFlight: Promise<void> = Promise.resolve();
  /** The batch in flight writes clientas. */
  private clientasInFlight = false;

  constructor(
    private readonly db: Kysely<DB>,
    private readonly clinic: ClinicContext,
    opts: RecordWriterOptions = {},
  ) {
    this.days = new LocalDays(clinic.timezone);
    this.mode = opts.mode ?? 'upsert';
    this.now = opts.now ?? Date.now;
    this.onMissing = opts.onMissing ?? (() => {});
  }

  private get withEvents(): boolean {
    return this.mode === 'upsert' && !this.discardEvents;
  }

  private nowSeconds(): number {
    return Math.floor(this.now() / 1000);
  }

  /** Records written, whatever they did (the demo's counts). */
  totals(): { clientas: number; citas: number; llamadas: number } {
    const t = (c: TypeCounts) => c.created + c.updated + c.unchanged;
    return { clientas: t(this.counts.clientas), citas: t(this.counts.citas), llamadas: t(this.counts.llamadas) };
  }

  /** True when something changed (a write that changes nothing bumps no version and makes no event). */
  get changed(): boolean {
    return Object.values(this.counts).some((c) => c.created + c.updated + c.deleted > 0);
  }

  async add(rec: ImportRecord): Promise<void> {
    // File order: a run of deletions is applied before the records after it.
    if (this.deletions !== null) await this.flushDeletions();
    const at = this.nowSeconds();
    if (rec.type === 'clienta') this.clientas.push(clientaRow(this.clinic.clinicId, rec, at));
    else if (rec.type === 'cita') this.citas.push(citaRow(this.clinic.clinicId, this.days, rec, at));
    else this.llamadas.push(llamadaRow(this.clinic.clinicId, this.days, rec, at));
    if (this.clientas.length + this.citas.length + this.llamadas.length >= FLUSH_AT) await this.startWrite();
  }

  /** A deletion (import line `"deleted": true`): applied in file order, after the records before it. */
  async delete(type: RecordType, id: string, line: number): Promise<void> {
    if (this.mode !== 'upsert') throw new Error('RecordWriter: deletions need upsert mode');
    if (this.clientas.length + this.citas.length + this.llamadas.length > 0) await this.startWrite();
    if (this.deletions !== null && this.deletions.type !== type) await this.flushDeletions();
    this.deletions ??= { type, items: [] };
    this.deletions.items.push({ id, line });
    if (this.deletions.items.length >= FLUSH_AT) await this.flushDeletions();
  }

  /** Applies a pending run of deletions now (a caller about to report later lines' problems). */
  async endDeletions(): Promise<void> {
    if (this.deletions !== null) await this.flushDeletions();
  }

  /** Writes what is buffered and waits until it is stored (e.g. before references are looked up). */
  async flush(): Promise<void> {
    await this.endDeletions();
    await this.startWrite();
    await this.inFlight;
  }

  /**
   * Waits until every clienta added so far is stored and every deletion applied, so references
   * to them can be looked up; a batch of only citas and calls may still be in flight (the
   * import's reference checks would otherwise stop the overlap of parsing and writing).
   */
  async storeClientas(): Promise<void> {
    await this.endDeletions();
    if (this.clientas.length > 0) await this.startWrite();
    if (this.clientasInFlight) await this.inFlight;
  }

  /** Hands the buffered rows to the database once the previous batch is stored; does not wait for it. */
  private async startWrite(): Promise<void> {
    await this.inFlight;
    this.clientasInFlight = false;
    if (this.clientas.length + this.citas.length + this.llamadas.length === 0) return;
    const batch = { clientas: this.clientas, citas: this.citas, llamadas: this.llamadas };
    this.clientasInFlight = batch.clientas.length > 0;
    this.clientas = [];
    this.citas = [];
    this.llamadas = [];
    const write = this.write(batch);
    // Failures surface at the next flush()/add(); until then nothing is left unhandled.
    this.inFlight = write;
    write.catch(() => {});
  }

  /** Clientas first, so references in the same batch resolve; then what changed with them. */
  private async write(batch: {
    clientas: Insertable<ClientasTable>[];
    citas: Insertable<CitasTable>[];
    llamadas: Insertable<LlamadasTable>[];
  }): Promise<void> {
    const { db, mode, deltas } = this;
    const clinicId = this.clinic.clinicId;
    const at = this.nowSeconds();
    const sections: Record<RecordType, Section> = {
      clienta: { type: 'clienta', events: [] },
      cita: { type: 'cita', events: [] },
      llamada: { type: 'llamada', events: [] },
    };
    /** Ids written by this batch, per type: an id touched again by a cascade needs no second event. */
    const seen = { clienta: new Set<string>(), cita: new Set<string>(), llamada: new Set<string>() };
    const unchanged = { clienta: new Set<string>(), cita: new Set<string>(), llamada: new Set<string>() };
    /** Clientas whose name (or phone) changed: what their citas and calls show changed too. */
    const renamed: string[] = [];
    const rephoned: string[] = [];

    const record = (type: RecordType, rows: { id: string }[], existed: Set<string> | null, written: string[]) => {
      const c = this.counts[PLURAL[type]];
      if (existed === null) {
        c.created += rows.length;
        return;
      }
      for (const id of written) {
        seen[type].add(id);
        const tipo: EventType = existed.has(id) ? `${type}.actualizada` : `${type}.creada`;
        if (existed.has(id)) c.updated++;
        else c.created++;
        sections[type].events.push({ id, tipo });
      }
      for (const r of rows) if (!seen[type].has(r.id)) unchanged[type].add(r.id);
      c.unchanged += rows.length - written.length;
    };

    if (batch.clientas.length) {
      const rows = lastPerId(batch.clientas);
      let existed: Set<string> | null = null;
      const before = new Map<string, { nombre: string; telefono: string }>();
      if (mode === 'upsert') {
        existed = new Set();
        for (const old of await storedClientaKeys(
          db,
          clinicId,
          rows.map((r) => r.id),
        )) {
          addDelta(deltas.clientas, [old.vip], -1);
          existed.add(old.id);
          before.set(old.id, old);
        }
      }
      for (const r of rows) addDelta(deltas.clientas, [r.vip], 1);
      const written = await writeClientas(db, rows, mode);
      record('clienta', rows, existed, written);
      if (this.withEvents) this.keepNames(rows.map((r) => [r.id, { nombre: r.nombre, telefono: r.telefono }]));
      if (before.size > 0) {
        const byId = new Map(rows.map((r) => [r.id, r]));
        for (const id of written) {
          const old = before.get(id);
          const now = byId.get(id)!;
          if (old === undefined) continue;
          if (old.nombre !== now.nombre) renamed.push(id);
          else if (old.telefono !== now.telefono) rephoned.push(id);
        }
      }
    }
    if (batch.citas.length) {
      const rows = lastPerId(batch.citas);
      let existed: Set<string> | null = null;
      if (mode === 'upsert') {
        existed = new Set();
        for (const old of await storedCitaKeys(
          db,
          clinicId,
          rows.map((r) => r.id),
        )) {
          addDelta(deltas.citas, [old.dia, old.estado], -1);
          existed.add(old.id);
        }
      }
      for (const r of rows) addDelta(deltas.citas, [r.dia, r.estado], 1);
      record('cita', rows, existed, await writeCitas(db, rows, mode));
      sections.cita.held = new Map(rows.map((r) => [r.id, r]));
    }
    if (batch.llamadas.length) {
      const rows = lastPerId(batch.llamadas);
      let existed: Set<string> | null = null;
      if (mode === 'upsert') {
        existed = new Set();
        for (const old of await storedLlamadaKeys(
          db,
          clinicId,
          rows.map((r) => r.id),
        )) {
          addDelta(deltas.llamadas, [old.dia, old.resultado], -1);
          existed.add(old.id);
        }
      }
      for (const r of rows) addDelta(deltas.llamadas, [r.dia, r.resultado], 1);
      record('llamada', rows, existed, await writeLlamadas(db, rows, mode));
      sections.llamada.held = new Map(rows.map((r) => [r.id, r]));
    }

    // A citas shows her name and phone, a call her name: those changed with her.
    const cascade = (type: 'cita' | 'llamada', ids: string[]) => {
      const c = this.counts[PLURAL[type]];
      for (const id of ids) {
        // Touched after it was written (its updated_at moved): read back, not shaped from the batch's row.
        sections[type].held?.delete(id);
        if (seen[type].has(id)) continue;
        seen[type].add(id);
        if (unchanged[type].delete(id)) c.unchanged--;
        c.updated++;
        sections[type].events.push({ id, tipo: `${type}.actualizada` });
      }
    };
    cascade('cita', await touchRecordsOf(db, 'citas', clinicId, [...renamed, ...rephoned], at));
    cascade('llamada', await touchRecordsOf(db, 'llamadas', clinicId, renamed, at));

    if (this.withEvents) await this.emit([sections.clienta, sections.cita, sections.llamada], at);
  }

  /** Applies the pending run of deletions (one record type), with the cascade of a clienta's. */
  private async flushDeletions(): Promise<void> {
    const run = this.deletions;
    this.deletions = null;
    if (run === null || run.items.length === 0) return;
    await this.inFlight;
    const { db, deltas } = this;
    const clinicId = this.clinic.clinicId;
    const at = this.nowSeconds();
    // The same id twice in a run: the second finds nothing left to delete.
    const first = new Map<string, number>();
    for (const { id, line } of run.items) {
      if (first.has(id)) this.onMissing({ line, type: run.type, id, again: true });
      else first.set(id, line);
    }
    const ids = [...first.keys()];
    const missing = (found: Set<string>) => {
      for (const [id, line] of first) if (!found.has(id)) this.onMissing({ line, type: run.type, id, again: false });
    };
    const gone = (type: RecordType, deleted: string[]): Section => {
      this.counts[PLURAL[type]].deleted += deleted.length;
      return { type, events: deleted.map((id) => ({ id, tipo: `${type}.eliminada` as EventType })) };
    };
    const sections: Section[] = [];

    if (run.type === 'cita') {
      const rows = await deleteCitas(db, clinicId, ids);
      for (const r of rows) addDelta(deltas.citas, [r.dia, r.estado], -1);
      const found = new Set(rows.map((r) => r.id));
      missing(found);
      sections.push(
        gone(
          'cita',
          ids.filter((id) => found.has(id)),
        ),
      );
    } else if (run.type === 'llamada') {
      const rows = await deleteLlamadas(db, clinicId, ids);
      for (const r of rows) addDelta(deltas.llamadas, [r.dia, r.resultado], -1);
      const found = new Set(rows.map((r) => r.id));
      missing(found);
      sections.push(
        gone(
          'llamada',
          ids.filter((id) => found.has(id)),
        ),
      );
    } else {
      const stored = new Set((await storedClientaKeys(db, clinicId, ids)).map((r) => r.id));
      missing(stored);
      const doomed = ids.filter((id) => stored.has(id));
      // Her citas go with her; her calls stay, as an unknown caller's; then she goes.
      const citas = await deleteCitasOf(db, clinicId, doomed);
      for (const r of citas) addDelta(deltas.citas, [r.dia, r.estado], -1);
      sections.push(
        gone(
          'cita',
          citas.map((r) => r.id),
        ),
      );
      const unlinked = await unlinkLlamadasOf(db, clinicId, doomed, at);
      this.counts.llamadas.updated += unlinked.length;
      sections.push({ type: 'llamada', events: unlinked.map((id) => ({ id, tipo: 'llamada.actualizada' as EventType })) });
      for (const id of doomed) this.names.delete(id);
      const clientas = await deleteClientas(db, clinicId, doomed);
      for (const r of clientas) addDelta(deltas.clientas, [r.vip], -1);
      const deleted = new Set(clientas.map((r) => r.id));
      sections.push(
        gone(
          'clienta',
          doomed.filter((id) => deleted.has(id)),
        ),
      );
    }
    if (this.withEvents) await this.emit(sections, at);
  }

  /**
   * Numbers and stores the events of one write, each with its record as the API shows it now.
   * A cita or call whose clienta is not stored yet (the file lists her later) cannot be shown
   * yet: its event is parked and made by finish().
   */
  private async emit(sections: Section[], at: number, parking = true): Promise<void> {
    const rows: Omit<EventRow, 'seq'>[] = [];
    const park: { tipo: string; id: string }[] = [];
    for (const s of sections) {
      for (let i = 0; i < s.events.length; i += RENDER_CHUNK[dialectOf(this.db)]) {
        const chunk = s.events.slice(i, i + RENDER_CHUNK[dialectOf(this.db)]);
        const datos = await this.render(
          s.type,
          chunk.filter((e) => !e.tipo.endsWith('.eliminada')).map((e) => e.id),
          at,
          s.held,
        );
        for (const e of chunk) {
          const d = e.tipo.endsWith('.eliminada') ? JSON.stringify({ id: e.id }) : datos.get(e.id);
          if (d === undefined) {
            if (parking) park.push({ tipo: e.tipo, id: e.id });
            // At the end, a parked record that is gone (deleted later in the file) has its eliminada event already.
            continue;
          }
          rows.push({ clinic_id: this.clinic.clinicId, id: randomUUID(), tipo: e.tipo, record_id: e.id, ocurrido_at: at, datos: d });
        }
      }
    }
    if (park.length > 0) {
      await parkEvents(this.db, park);
      this.parked += park.length;
    }
    if (rows.length === 0) return;
    await this.readyVersions();
    const first = await takeSeqs(this.db, this.clinic.clinicId, rows.length);
    await insertEvents(
      this.db,
      rows.map((r, i) => ({ ...r, seq: first + i })),
    );
    this.emitted += rows.length;
  }

  /** The API's JSON of the records `ids` as stored now; an id missing from the map cannot be shown yet (or is gone). */
  private async render(type: RecordType, ids: string[], at: number, held?: Held): Promise<Map<string, string>> {
    const out = new Map<string, string>();
    if (ids.length === 0) return out;
    const { db, clinic } = this;
    if (type === 'clienta') {
      // Her derived fields (totals, last cita and call) need her citas and calls: read back.
      for (const r of await clientasByIds(db, clinic.clinicId, ids, at)) out.set(r.id, JSON.stringify(clientaOut(r, clinic)));
      return out;
    }
    const readBack: string[] = [];
    const rows: (Insertable<CitasTable> | Insertable<LlamadasTable>)[] = [];
    for (const id of ids) {
      const row = held?.get(id);
      if (row === undefined) readBack.push(id);
      else rows.push(row);
    }
    if (rows.length > 0) {
      // Only the clientas' name and phone are not in the rows: those not kept, one look-up for the chunk.
      const names: Names = new Map();
      const unknown: string[] = [];
      for (const r of rows) {
        if (r.clienta_id == null || names.has(r.clienta_id)) continue;
        const kept = this.names.get(r.clienta_id);
        if (kept === undefined) unknown.push(r.clienta_id);
        else names.set(r.clienta_id, kept);
      }
      if (unknown.length > 0) {
        const found = await clientaNames(db, clinic.clinicId, [...new Set(unknown)]);
        for (const [id, n] of found) names.set(id, n);
        this.keepNames([...found]);
      }
      for (const r of rows) {
        const json =
          type === 'cita'
            ? heldCita(r as Insertable<CitasTable>, names, clinic)
            : heldLlamada(r as Insertable<LlamadasTable>, names, clinic);
        if (json !== undefined) out.set(r.id, json);
      }
    }
    if (readBack.length === 0) return out;
    if (type === 'cita') {
      for (const r of await citasByIds(db, clinic.clinicId, readBack)) out.set(r.id, JSON.stringify(citaOut(r, clinic)));
    } else {
      for (const r of await llamadasByIds(db, clinic.clinicId, readBack)) {
        if (!r.awaitingClienta) out.set(r.id, JSON.stringify(llamadaOut(r, clinic)));
      }
    }
    return out;
  }

  /** Keeps clientas' names and phones as stored now (from rows written or looked up), within NAMES_KEPT. */
  private keepNames(entries: [string, { nombre: string; telefono: string }][]): void {
    if (this.names.size + entries.length > NAMES_KEPT) this.names.clear();
    for (const [id, n] of entries) this.names.set(id, n);
  }

  private async readyVersions(): Promise<void> {
    if (this.versionsReady) return;
    await ensureDataVersions(this.db, this.clinic.clinicId);
    this.versionsReady = true;
  }

  /** The parked events, in the order they were parked, now that every clienta of the file is stored. */
  private async emitParked(): Promise<void> {
    const at = this.nowSeconds();
    let after = 0;
    for (;;) {
      const rows = await pendingEvents(this.db, after, RENDER_CHUNK[dialectOf(this.db)]);
      if (rows.length === 0) break;
      after = rows[rows.length - 1]!.ord;
      // Consecutive events of one type render together; the order between types is kept.
      const sections: Section[] = [];
      for (const r of rows) {
        const type = r.tipo.slice(0, r.tipo.indexOf('.')) as RecordType;
        const last = sections[sections.length - 1];
        if (last?.type === type) last.events.push({ id: r.record_id, tipo: r.tipo as EventType });
        else sections.push({ type, events: [{ id: r.record_id, tipo: r.tipo as EventType }] });
      }
      await this.emit(sections, at, false);
    }
    await dropPendingEvents(this.db);
  }

  /** Flushes, makes the parked events and applies the count changes; call once at the end, inside the transaction. */
  async finish(): Promise<void> {
    await this.flush();
    if (this.parked > 0 && this.withEvents) await this.emitParked();
    await applyCountDeltas(this.db, this.clinic.clinicId, 'clientas_por_vip', this.deltas.clientas);
    await applyCountDeltas(this.db, this.clinic.clinicId, 'citas_por_dia', this.deltas.citas);
    await applyCountDeltas(this.db, this.clinic.clinicId, 'llamadas_por_dia', this.deltas.llamadas);
    // The lists' ETags, and the kept search totals when clientas changed, are now stale.
    if (this.changed) {
      await this.readyVersions();
      const c = this.counts.clientas;
      await bumpDataVersions(this.db, this.clinic.clinicId, c.created + c.updated + c.deleted > 0);
    }
    if (this.emitted > 0) await notifyEvents(this.db, this.clinic.clinicId);
  }
}
