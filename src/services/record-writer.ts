// Turns import-format records into rows (search keys, local day, cents) and writes them in
// batches. Import and demo generation share it, so both store data exactly alike.
import type { Insertable, Kysely } from 'kysely';
import type { CitasTable, ClientasTable, DB, LlamadasTable } from '../db/schema.js';
import type { CitaRecord, ClientaRecord, ImportRecord, LlamadaRecord } from '../domain/records.js';
import { refreshCounts, upsertCitas, upsertClientas, upsertLlamadas, WRITE_BATCH } from '../repos/writes.js';
import { localDate } from '../time.js';
import { normalizeName, phoneDigits } from './normalize.js';

export function clientaRow(clinicId: string, r: ClientaRecord): Insertable<ClientasTable> {
  return {
    clinic_id: clinicId, id: r.id, nombre: r.nombre, nombre_norm: normalizeName(r.nombre), telefono: r.telefono,
    telefono_digits: phoneDigits(r.telefono), email: r.email, idioma: r.idioma, vip: r.vip ? 1 : 0,
    cliente_desde: r.cliente_desde, created_at: r.created_at,
  };
}

export function citaRow(clinicId: string, zone: string, r: CitaRecord): Insertable<CitasTable> {
  return {
    clinic_id: clinicId, id: r.id, clienta_id: r.clienta_id, fecha_hora: r.fecha_hora, dia: localDate(r.fecha_hora, zone),
    servicio: r.servicio, duracion_min: r.duracion_min, precio_cents: r.precio_cents, estado: r.estado,
    profesional_nombre: r.profesional_nombre, sede_nombre: r.sede_nombre, notas: r.notas, created_at: r.created_at,
  };
}

export function llamadaRow(clinicId: string, zone: string, r: LlamadaRecord): Insertable<LlamadasTable> {
  return {
    clinic_id: clinicId, id: r.id, clienta_id: r.clienta_id, fecha_hora: r.fecha_hora, dia: localDate(r.fecha_hora, zone),
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

export class RecordWriter {
  private clientas: Insertable<ClientasTable>[] = [];
  private citas: Insertable<CitasTable>[] = [];
  private llamadas: Insertable<LlamadasTable>[] = [];
  readonly counts = { clientas: 0, citas: 0, llamadas: 0 };

  constructor(private readonly db: Kysely<DB>, private readonly clinicId: string, private readonly zone: string) {}

  async add(rec: ImportRecord): Promise<void> {
    if (rec.type === 'clienta') {
      this.clientas.push(clientaRow(this.clinicId, rec));
      this.counts.clientas++;
    } else if (rec.type === 'cita') {
      this.citas.push(citaRow(this.clinicId, this.zone, rec));
      this.counts.citas++;
    } else {
      this.llamadas.push(llamadaRow(this.clinicId, this.zone, rec));
      this.counts.llamadas++;
    }
    if (this.clientas.length + this.citas.length + this.llamadas.length >= WRITE_BATCH * 4) await this.flush();
  }

  /** Writes what is buffered; clientas first, so references in the same batch resolve. */
  async flush(): Promise<void> {
    if (this.clientas.length) await upsertClientas(this.db, lastPerId(this.clientas));
    if (this.citas.length) await upsertCitas(this.db, lastPerId(this.citas));
    if (this.llamadas.length) await upsertLlamadas(this.db, lastPerId(this.llamadas));
    this.clientas = [];
    this.citas = [];
    this.llamadas = [];
  }

  /** Flushes and recomputes the clinic's counts; call once at the end, inside the transaction. */
  async finish(): Promise<void> {
    await this.flush();
    await refreshCounts(this.db, this.clinicId);
  }
}
