// The client's name and phone that every cita shows (and a call, her name), read from one index:
// clientas (clinic_id, id, nombre, telefono). A page of a hundred citas joins a hundred clientas by
// primary key; on SQLite each was two B-tree descents (the primary key's index, then the table by
// rowid) into pages scattered over the table, and is now one, into a smaller index: the query alone
// takes 141 µs instead of 153, and a cold page in the service 0.52 ms of CPU instead of 0.55-0.57
// (npm run bench). SQLite's planner prefers the unique primary key when it has no statistics, so
// its queries name the index (repos/clienta-join.ts). PostgreSQL keeps its primary-key join: an
// index-only scan there depends on its visibility map, and nothing measured there asks for another
// index to keep up to date.
import { sql, type Kysely } from 'kysely';
import type { Dialect } from '../dialect.js';

export async function up(db: Kysely<unknown>, dialect: Dialect): Promise<void> {
  if (dialect !== 'sqlite') return;
  await sql`create index clientas_join_cover on clientas (clinic_id, id, nombre, telefono)`.execute(db);
}
