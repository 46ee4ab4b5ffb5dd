// One record of the key's clinic by its id (GET /api/v1/{collection}/{id}, the MCP tools): read
// by the queries the lists and the events use (citasByIds, clientasByIds, llamadasByIds) and
// shaped by the same functions (shape.ts), so a record reads the same here, in a list and in the
// feed. null when the clinic has no record with that id: another clinic's id is
// not found either, since every query is of the clinic. Never imports Fastify.
import type { Kysely } from 'kysely';
import type { ApiRecord, CollectionName } from '../collections/index.js';
import type { DB } from '../db/schema.js';
import type { Cita } from '../collections/citas.js';
import type { Clienta } from '../collections/clientas.js';
import type { Llamada } from '../collections/llamadas.js';
import { citasByIds } from '../repos/citas.js';
import { clientasByIds } from '../repos/clientas.js';
import { llamadasByIds } from '../repos/llamadas.js';
import { withoutContact } from './contact-view.js';
import { citaOut, clientaOut, llamadaOut, type ClinicContext } from './shape.js';

// `contact`: the key's view (contacto:read); without it the contact fields are null, as in the lists.

/** A record read, and the clienta whose data it holds (null: none, an unknown caller's call). */
export interface RecordRead<T> {
  record: T;
  clientaId: string | null;
}

export async function citaById(db: Kysely<DB>, ctx: ClinicContext, id: string, contact: boolean): Promise<Cita | null> {
  return (await citaRead(db, ctx, id, contact))?.record ?? null;
}

export async function citaRead(db: Kysely<DB>, ctx: ClinicContext, id: string, contact: boolean): Promise<RecordRead<Cita> | null> {
  const [row] = await citasByIds(db, ctx.clinicId, [id]);
  if (row === undefined) return null;
  return { record: contact ? citaOut(row, ctx) : withoutContact('citas', citaOut(row, ctx)), clientaId: row.clienta_id };
}

/** `nowMs`: ultima_cita is her latest cita that starts at or before now. */
export async function clientaRead(
  db: Kysely<DB>,
  ctx: ClinicContext,
  id: string,
  nowMs: number,
  contact: boolean,
): Promise<RecordRead<Clienta> | null> {
  const record = await clientaById(db, ctx, id, nowMs, contact);
  return record === null ? null : { record, clientaId: record.id };
}

export async function llamadaRead(db: Kysely<DB>, ctx: ClinicContext, id: string, contact: boolean): Promise<RecordRead<Llamada> | null> {
  const [row] = await llamadasByIds(db, ctx.clinicId, [id]);
  if (row === undefined) return null;
  return { record: contact ? llamadaOut(row, ctx) : withoutContact('llamadas', llamadaOut(row, ctx)), clientaId: row.clienta_id };
}

/** `nowMs`: ultima_cita is her latest cita that starts at or before now. */
export async function clientaById(
  db: Kysely<DB>,
  ctx: ClinicContext,
  id: string,
  nowMs: number,
  contact: boolean,
): Promise<Clienta | null> {
  const [row] = await clientasByIds(db, ctx.clinicId, [id], Math.floor(nowMs / 1000));
  if (row === undefined) return null;
  return contact ? clientaOut(row, ctx) : withoutContact('clientas', clientaOut(row, ctx));
}

export async function llamadaById(db: Kysely<DB>, ctx: ClinicContext, id: string, contact: boolean): Promise<Llamada | null> {
  // (its awaitingClienta is for an import reading inside its own transaction: a committed call's
  // linked clienta is always stored)
  return (await llamadaRead(db, ctx, id, contact))?.record ?? null;
}

type Reader<N extends CollectionName> = (
  db: Kysely<DB>,
  ctx: ClinicContext,
  id: string,
  nowMs: number,
  contact: boolean,
) => Promise<RecordRead<ApiRecord<N>> | null>;

const READERS: { [N in CollectionName]: Reader<N> } = {
  citas: (db, ctx, id, _nowMs, contact) => citaRead(db, ctx, id, contact),
  clientas: (db, ctx, id, nowMs, contact) => clientaRead(db, ctx, id, nowMs, contact),
  llamadas: (db, ctx, id, _nowMs, contact) => llamadaRead(db, ctx, id, contact),
};

/** One record of collection `name` as the API shows it, and whose data it holds; `nowMs` for a clienta's ultima_cita. */
export function readRecord<N extends CollectionName>(
  db: Kysely<DB>,
  name: N,
  ctx: ClinicContext,
  id: string,
  nowMs: number,
  contact: boolean,
): Promise<RecordRead<ApiRecord<N>> | null> {
  return (READERS[name] as Reader<N>)(db, ctx, id, nowMs, contact);
}

/**
 * The API's JSON of the records `ids` of collection `name` as stored now, with their clienta (a
 * record not found is missing from the map): the events' datos. `at`: now, in epoch seconds.
 */
export async function storedJson(
  db: Kysely<DB>,
  clinic: ClinicContext,
  name: CollectionName,
  ids: string[],
  at: number,
): Promise<Map<string, { json: string; clienta: string | null }>> {
  const out = new Map<string, { json: string; clienta: string | null }>();
  if (ids.length === 0) return out;
  if (name === 'clientas') {
    for (const r of await clientasByIds(db, clinic.clinicId, ids, at))
      out.set(r.id, { json: JSON.stringify(clientaOut(r, clinic)), clienta: r.id });
  } else if (name === 'citas') {
    for (const r of await citasByIds(db, clinic.clinicId, ids))
      out.set(r.id, { json: JSON.stringify(citaOut(r, clinic)), clienta: r.clienta_id });
  } else {
    for (const r of await llamadasByIds(db, clinic.clinicId, ids))
      if (!r.awaitingClienta) out.set(r.id, { json: JSON.stringify(llamadaOut(r, clinic)), clienta: r.clienta_id });
  }
  return out;
}
