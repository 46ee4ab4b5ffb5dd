// The view of a key without contacto:read (domain/scopes.ts): every record it receives has its
// contact details (CONTACT_FIELDS: telefono, email, telefono_caller, notas) set to null, in the
// lists, the single records, the CSV (made from the same page) and the feed's datos. Applied to
// the shaped records before they are written, so one place decides, whatever the representation.
// A key with the scope never passes through here: its pages cost nothing more.
import { COLLECTIONS, type ApiRecord, type CollectionName } from '../collections/index.js';
import { CONTACT_FIELDS } from '../domain/scopes.js';

type RecordName = keyof typeof CONTACT_FIELDS;

function blank(record: Record<string, unknown>, fields: readonly string[]): void {
  for (const f of fields) if (f in record) record[f] = null;
}

/** A record of collection `name` without its contact details (blanked in place). */
export function withoutContact<N extends CollectionName>(name: N, record: ApiRecord<N>): ApiRecord<N> {
  blank(record, COLLECTIONS[name].contactFields);
  return record;
}

/**
 * An event's datos (stored as the record's JSON text) without contact details: read, blanked,
 * written again (JSON.parse keeps the fields' order, so only the values differ). A deletion's
 * datos ({"id": ...}) has none and comes back unchanged.
 */
export function datosWithoutContact(tipo: string, datos: string): string {
  const record = tipo.slice(0, tipo.indexOf('.')) as RecordName;
  const fields = CONTACT_FIELDS[record];
  if (fields === undefined) return datos;
  const parsed = JSON.parse(datos) as Record<string, unknown>;
  if (!fields.some((f) => f in parsed)) return datos;
  blank(parsed, fields);
  return JSON.stringify(parsed);
}
