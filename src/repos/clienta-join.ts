// `clientas as cl`, as the lists of appointments and calls join it for the client's name and
// phone: on SQLite through the index that holds both (clientas_join_cover; migration 017 says
// why), named, because its planner, without statistics, takes the unique primary key and then
// reads the table.
import type { Kysely } from 'kysely';
import { indexedBy } from '../db/indexed-by.js';
import type { ClientasTable, DB } from '../db/schema.js';

/** The table expression to join: `clientas as cl`, on SQLite through its covering index. */
export function clientasJoined(db: Kysely<DB>) {
  return indexedBy<ClientasTable, 'cl'>(db, 'clientas', 'cl', 'clientas_join_cover');
}
