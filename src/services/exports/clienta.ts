// A client's own data as a ZIP (GDPR arts. 15 and 20): `clinic-api clientas export` and the
// owner's button on her page of the access record. Her record, her citas and her calls in the
// API's JSON shapes and as CSV (the lists' columns, cells a spreadsheet would run as formulas
// neutralised), her access record (which integration read her data, when, through which
// endpoint), the JSON Schemas of those files, and a LEEME.txt / README.txt in the clinic's
// language. "Her calls" are those erasure would delete (services/erasure.ts): linked to her, or
// from one of her phones linked to no clienta.
//
// A client's records are few (hundreds at most): they are read whole. Her access record may be
// long (every page of every integration that listed her for a month): it is streamed a page at
// a time into the ZIP, twice (JSON, then CSV).
import type { Writable } from 'node:stream';
import { stringify } from 'csv-stringify/sync';
import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.js';
import { COLLECTIONS } from '../../collections/index.js';
import { AUDIT_CSV_OPTIONS, recordCsv, recordsCsvText } from '../../domain/csv-cells.js';
import { ACCESS_COLUMNS, AccessEntry, schemaDocument } from '../../domain/export-schemas.js';
import { DomainError } from '../../errors.js';
import { citasByIds } from '../../repos/citas.js';
import { clientasByIds } from '../../repos/clientas.js';
import type { Clinic } from '../../repos/clinics.js';
import { citaIdsOf, clientaEventDatos, clientaIdentity, llamadaIdsOf } from '../../repos/erasure.js';
import { llamadasByIds } from '../../repos/llamadas.js';
import { formatTimestampMs } from '../../time.js';
import { phonesOf } from '../erasure.js';
import { accessEntries, isKnownClienta, type AccessRow } from '../request-log-read.js';
import { citaOut, clientaOut, llamadaOut, type ClinicContext } from '../shape.js';
import { clientaReadme, exportLang, README_NAME } from './readme.js';
import { writeZip, type ZipEntry } from './zip.js';

/** Who made a logged request, by the names the clinic gave: its keys by id, its apps by grant id. */
export interface IntegrationNames {
  keys: ReadonlyMap<string, string>;
  apps: ReadonlyMap<string, string>;
}

const IDS_AT_ONCE = 500;

/** The rows of `ids` read `IDS_AT_ONCE` at a time. */
async function inBatches<T>(ids: readonly string[], read: (batch: string[]) => Promise<T[]>): Promise<T[]> {
  const out: T[] = [];
  for (let i = 0; i < ids.length; i += IDS_AT_ONCE) out.push(...(await read(ids.slice(i, i + IDS_AT_ONCE))));
  return out;
}

const csvOf = (properties: Record<string, unknown>, records: readonly object[]) => recordsCsvText(recordCsv(properties), records);

const json = (value: unknown) => `${JSON.stringify(value, null, 2)}\n`;

/** A clienta of the clinic, or one erased whose access record still names her; else not_found. */
export async function requireExportableClienta(db: Kysely<DB>, clinicId: string, clientaId: string, nowMs: number): Promise<void> {
  if (await isKnownClienta(db, clinicId, clientaId, nowMs)) return;
  throw new DomainError(
    'not_found',
    `no clienta with id ${clientaId} in clinic ${clinicId}, and no logged request disclosed one: ` +
      "check the id (the API's clientas list shows them)",
    { field: 'clienta' },
  );
}

export interface ClientaExportResult {
  bytes: number;
  name: string | null;
  counts: { citas: number; llamadas: number; access: number };
}

/**
 * Writes the ZIP of clienta `clientaId` of `clinic` into `out`. An erased clienta (no record, but
 * an access record that still names her) gets her access record and empty files; an id that is
 * neither is not_found, before anything is written.
 */
export async function writeClientaExport(
  db: Kysely<DB>,
  clinic: Clinic,
  clientaId: string,
  names: IntegrationNames,
  out: Writable,
  nowMs: number,
): Promise<ClientaExportResult> {
  const ctx: ClinicContext = { clinicId: clinic.id, timezone: clinic.timezone, currency: clinic.currency };
  await requireExportableClienta(db, clinic.id, clientaId, nowMs);
  const [row] = await clientasByIds(db, clinic.id, [clientaId], Math.floor(nowMs / 1000));
  const her = await clientaIdentity(db, clinic.id, clientaId);
  const phones = phonesOf(her?.telefono, await clientaEventDatos(db, clinic.id, clientaId));
  const citaIds = row ? await citaIdsOf(db, clinic.id, clientaId) : [];
  const llamadaIds = await llamadaIdsOf(db, clinic.id, clientaId, phones);
  const byTime = (a: { fecha_hora: number; id: string }, b: { fecha_hora: number; id: string }) =>
    a.fecha_hora - b.fecha_hora || (a.id < b.id ? -1 : 1);
  const citas = (await inBatches(citaIds, (b) => citasByIds(db, clinic.id, b))).sort(byTime).map((r) => citaOut(r, ctx));
  const llamadas = (await inBatches(llamadaIds, (b) => llamadasByIds(db, clinic.id, b))).sort(byTime).map((r) => llamadaOut(r, ctx));
  const clienta = row ? clientaOut(row, ctx) : null;

  let access = 0;
  const entry = (r: AccessRow) => ({
    time: formatTimestampMs(r.at_ms, clinic.timezone),
    integration: r.grant_id !== null ? (names.apps.get(r.grant_id) ?? r.grant_id) : (names.keys.get(r.key_id ?? '') ?? r.key_id ?? ''),
    key_id: r.key_id,
    app_grant_id: r.grant_id,
    request_id: r.request_id,
    method: r.method,
    endpoint: r.path,
    query: r.query,
    status: r.status,
  });
  // Her access record, newest first, as a JSON array written an entry at a time.
  async function* accessJson(): AsyncGenerator<string> {
    let first = true;
    yield '[';
    for await (const r of accessEntries(db, clinic.id, clientaId)) {
      access++;
      yield `${first ? '\n' : ',\n'}  ${JSON.stringify(entry(r))}`;
      first = false;
    }
    yield first ? ']\n' : '\n]\n';
  }
  async function* accessCsv(): AsyncGenerator<string> {
    yield stringify([ACCESS_COLUMNS], AUDIT_CSV_OPTIONS);
    for await (const r of accessEntries(db, clinic.id, clientaId)) {
      const e = entry(r) as Record<string, unknown>;
      yield stringify([ACCESS_COLUMNS.map((c) => e[c] ?? '')], AUDIT_CSV_OPTIONS);
    }
  }

  const lang = exportLang(clinic.language);
  const madeAt = formatTimestampMs(nowMs, clinic.timezone);
  const entries: ZipEntry[] = [
    { name: 'clienta.json', content: json(clienta) },
    { name: 'clienta.csv', content: csvOf(COLLECTIONS.clientas.record.properties, clienta ? [clienta] : []) },
    { name: 'citas.json', content: json(citas) },
    { name: 'citas.csv', content: csvOf(COLLECTIONS.citas.record.properties, citas) },
    { name: 'llamadas.json', content: json(llamadas) },
    { name: 'llamadas.csv', content: csvOf(COLLECTIONS.llamadas.record.properties, llamadas) },
    { name: 'accesos.json', content: accessJson },
    { name: 'accesos.csv', content: accessCsv },
    { name: 'schemas/clienta.schema.json', content: schemaDocument(COLLECTIONS.clientas.record, 'clienta.json', false) },
    { name: 'schemas/citas.schema.json', content: schemaDocument(COLLECTIONS.citas.record, 'citas.json', true) },
    { name: 'schemas/llamadas.schema.json', content: schemaDocument(COLLECTIONS.llamadas.record, 'llamadas.json', true) },
    { name: 'schemas/accesos.schema.json', content: schemaDocument(AccessEntry, 'accesos.json', true) },
  ];
  // The LEEME/README last: it counts the access entries, known once they are written.
  const counts = { citas: citas.length, llamadas: llamadas.length, access: 0 };
  const readme: ZipEntry = {
    name: README_NAME[lang],
    content: async function* () {
      yield clientaReadme(lang, { clinic: clinic.name, clientaId, name: row?.nombre ?? null, madeAt, counts: { ...counts, access } });
    },
  };
  const bytes = await writeZip([...entries, readme], out, new Date(nowMs));
  return { bytes, name: row?.nombre ?? null, counts: { ...counts, access } };
}

/** The names of the clinic's keys and connected apps (revoked and disconnected ones too: their requests stay in the log). */
export async function integrationNamesOf(
  keys: { list(clinicId: string): Promise<readonly { id: string; name: string }[]> },
  grants: { list(clinicId: string): Promise<readonly { id: string; client_id: string; client_name: string }[]> },
  clinicId: string,
): Promise<IntegrationNames> {
  const [k, g] = await Promise.all([keys.list(clinicId), grants.list(clinicId)]);
  return { keys: new Map(k.map((x) => [x.id, x.name])), apps: new Map(g.map((x) => [x.id, x.client_name])) };
}
