// `clientas as cl`, as the lists of appointments and calls join it for the client's name and
// phone: on SQLite through the index that holds both (clientas_join_cover, migration 017 says
// why), named, because its planner, without statistics, takes the unique primary key and then
// reads the table.
import { sql, type Kysely } from 'kysely';
import { dialectOf } from '../db/dialect.js';
import type { ClientasTable, DB } from '../db/schema.js';

/** The table expression to join: `clientas as cl`, on SQLite with its covering index named. */
export function clientasJoined(db: Kysely<DB>) {
  return dialectOf(db) === 'sqlite'
    ? sql<ClientasTable>`clientas`.as<'cl'>(sql`cl indexed by clientas_join_cover`)
    : sql<ClientasTable>`clientas`.as<'cl'>(sql`cl`);
}
