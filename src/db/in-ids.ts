// `column IN (ids)` for look-ups of many ids at once (bulk writes, rendering the events of an
// import, a search's page).
import { sql, type Kysely, type SqlBool } from 'kysely';
import { dialectOf } from './dialect.js';

/**
 * PostgreSQL gets one array parameter (`= any($1::text[])`): planning an IN list of thousands
 * of parameters took longer than the look-ups themselves (an import reads back 5,000 records at
 * a time to render their events). SQLite gets the IN list, whose prepared statement it caches.
 */
export function inIds<T>(db: Kysely<T>, column: string, ids: readonly string[]) {
  return dialectOf(db) === 'postgres'
    ? sql<SqlBool>`${sql.ref(column)} = any(${[...ids]}::text[])`
    : sql<SqlBool>`${sql.ref(column)} in (${sql.join([...ids])})`;
}
