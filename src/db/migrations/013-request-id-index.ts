// One request found by the id an integrator quotes (X-Request-Id, an error body's request_id):
// `clinic-api logs --request-id` and the dashboard's Logs page, which also addresses an entry by
// it (a global row id would show, by its gaps, how many requests other clinics made). Request
// ids are not unique (a client may send its own X-Request-Id, and reuse it), so the index is not
// either. Within the clinic: a look-up never crosses clinics.
import { sql, type Kysely } from 'kysely';
import type { Dialect } from '../dialect.js';

export async function up(db: Kysely<unknown>, _dialect: Dialect): Promise<void> {
  await sql`create index request_log_by_request_id on request_log (clinic_id, request_id)`.execute(db);
}
