// Import-format records -> the rows stored, by each collection's descriptor (toRow: search keys
// of a name and phone, the local day in the clinic's zone, prices in cents). Pure.
import { COLLECTIONS, NAME_OF, type ImportRecord, type RecordType } from '../../collections/index.js';

export type { RecordType };

/** The table of each record type, and the plural the counts use. */
export const TABLE_OF = NAME_OF;

/** A record as the row of its table (without clinic_id and updated_at, which the write sets). */
export function rowOf(r: ImportRecord, zone: string): Record<string, unknown> {
  return COLLECTIONS[NAME_OF[r.type]].toRow(r as never, zone);
}
