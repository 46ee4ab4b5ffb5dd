// Turns import-format records into rows (search keys, local day, cents) and writes them in
// batches. Import and demo generation share it, so both store data exactly alike.
import type { Insertable, Kysely } from 'kysely';
import type { CitasTable, ClientasTable, DB, LlamadasTable } from '../db/schema.js';
import { bumpClientasVersion } from '../repos/clinics.js';
import type { CitaRecord, ClientaRecord, ImportRecord, LlamadaRecord } from '../domain/records.js';
import {
  addDelta, applyCountDeltas, storedCitaKeys, storedClientaKeys, storedLlamadaKeys, writeCitas, writeClientas, writeLlamadas,
  type CountDeltas, type WriteMode,
} from '../repos/writes.js';
import { localDate } from '../time.js';
import { normalizeName, phoneDigits } from './normalize.js';

export function clientaRow(clinicId: string, r: ClientaRecord): Insertable<ClientasTable> {
  return {
    clinic_id: clinicId, id: r.id, nombre: r.nombre, nombre_norm: normalizeName(r.nombre), telefono: r.telefono,
    telefono_digits: phoneDigits(r.telefono), email: r.email, idioma: r.idioma, vip: r.vip ? 1 : 0,
    cliente_desde: r.cliente_desde, created_at: r.created_at,
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

export function citaRow(clinicId: string, zone: string | LocalDays, r: CitaRecord): Insertable<CitasTable> {
  const dia = typeof zone === 'string' ? localDate(r.fecha_hora, zone) : zone.of(r.fecha_hora);
  return {
    clinic_id: clinicId, id: r.id, clienta_id: r.clienta_id, fecha_hora: r.fecha_hora, dia,
    servicio: r.servicio, duracion_min: r.duracion_min, precio_cents: r.precio_cents, estado: r.estado,
    profesional_nombre: r.profesional_nombre, sede_nombre: r.sede_nombre, notas: r.notas, created_at: r.created_at,
  };
}

export function llamadaRow(clinicId: string, zone: string | LocalDays, r: LlamadaRecord): Insertable<LlamadasTable> {
  const dia = typeof zone === 'string' ? localDate(r.fecha_hora, zone) : zone.of(r.fecha_hora);
  return {
    clinic_id: clinicId, id: r.id, clienta_id: r.clienta_id, fecha_hora: r.fecha_hora, dia,
    cliente_nombre: r.cliente_nombre, telefono_caller: r.telefono_caller, duracion_segundos: r.duracion_segundos,
    resultado: r.resultado, idioma: r.idioma, created_at: r.created_at,
  };
}

/** Keeps the last row per id: one INSERT ... ON CONFLICT may not touch a row twice. */
function lastPerId<T extends { id: string }>(rows: T[]): T[] {
  const byId = new Map<string, T>();
  for (const r of rows) byId.set(r.id, r);
  return byId.size === rows.length ? rows : [...byId.values()];
}

/** Records buffered before a write: big statements, bounded memory. */
const FLUSH_AT = 5_000;

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
  private readonly deltas = { citas: new Map() as CountDeltas, llamadas: new Map() as CountDeltas, clientas: new Map() as CountDeltas };
  readonly counts = { clientas: 0, citas: 0, llamadas: 0 };
  private readonly days: LocalDays;
  /** The batch being written: PostgreSQL stores it while the caller produces the next one. */
  private inFlight: Promise<void> = Promise.resolve();

  constructor(
    private readonly db: Kysely<DB>,
    private readonly clinicId: string,
    zone: string,
    private readonly mode: WriteMode = 'upsert',
  ) {
    this.days = new LocalDays(zone);
  }

  async add(rec: ImportRecord): Promise<void> {
    if (rec.type === 'clienta') {
      this.clientas.push(clientaRow(this.clinicId, rec));
      this.counts.clientas++;
    } else if (rec.type === 'cita') {
      this.citas.push(citaRow(this.clinicId, this.days, rec));
      this.counts.citas++;
    } else {
      this.llamadas.push(llamadaRow(this.clinicId, this.days, rec));
      this.counts.llamadas++;
    }
    if (this.clientas.length + this.citas.length + this.llamadas.length >= FLUSH_AT) await this.startWrite();
  }

  /** Writes what is buffered and waits until it is stored (e.g. before references are looked up). */
  async flush(): Promise<void> {
    await this.startWrite();
    await this.inFlight;
  }

  /** Hands the buffered rows to the database once the previous batch is stored; does not wait for it. */
  private async startWrite(): Promise<void> {
    await this.inFlight;
    const batch = { clientas: this.clientas, citas: this.citas, llamadas: this.llamadas };
    this.clientas = [];
    this.citas = [];
    this.llamadas = [];
    const write = this.write(batch);
    // Failures surface at the next flush()/add(); until then nothing is left unhandled.
    this.inFlight = write;
    write.catch(() => {});
  }

  /** Clientas first, so references in the same batch resolve. */
  private async write(batch: { clientas: Insertable<ClientasTable>[]; citas: Insertable<CitasTable>[]; llamadas: Insertable<LlamadasTable>[] }): Promise<void> {
    const { db, clinicId, mode, deltas } = this;
    if (batch.clientas.length) {
      const rows = lastPerId(batch.clientas);
      if (mode === 'upsert') {
        for (const old of await storedClientaKeys(db, clinicId, rows.map((r) => r.id))) addDelta(deltas.clientas, [old.vip], -1);
      }
      for (const r of rows) addDelta(deltas.clientas, [r.vip], 1);
      await writeClientas(db, rows, mode);
    }
    if (batch.citas.length) {
      const rows = lastPerId(batch.citas);
      if (mode === 'upsert') {
        for (const old of await storedCitaKeys(db, clinicId, rows.map((r) => r.id))) addDelta(deltas.citas, [old.dia, old.estado], -1);
      }
      for (const r of rows) addDelta(deltas.citas, [r.dia, r.estado], 1);
      await writeCitas(db, rows, mode);
    }
    if (batch.llamadas.length) {
      const rows = lastPerId(batch.llamadas);
      if (mode === 'upsert') {
        for (const old of await storedLlamadaKeys(db, clinicId, rows.map((r) => r.id))) addDelta(deltas.llamadas, [old.dia, old.resultado], -1);
      }
      for (const r of rows) addDelta(deltas.llamadas, [r.dia, r.resultado], 1);
      await writeLlamadas(db, rows, mode);
    }
  }

  /** Flushes and applies the count changes; call once at the end, inside the transaction. */
  async finish(): Promise<void> {
    await this.flush();
    await applyCountDeltas(this.db, this.clinicId, 'clientas_por_vip', this.deltas.clientas);
    await applyCountDeltas(this.db, this.clinicId, 'citas_por_dia', this.deltas.citas);
    await applyCountDeltas(this.db, this.clinicId, 'llamadas_por_dia', this.deltas.llamadas);
    // Cached search totals of this clinic were made at the old version: they are now stale.
    if (this.counts.clientas > 0) await bumpClientasVersion(this.db, this.clinicId);
  }
}
