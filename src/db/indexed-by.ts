// A table under an alias with the index to read it by named, on SQLite (`INDEXED BY`): without
// statistics its planner cannot tell some indexes apart, and takes the wrong one (the first that
// fits, or a unique key and then the table). The repos say, per query, which index and why.
// PostgreSQL plans with its statistics: there it is the plain `"table" as "alias"`.
import { sql, type AliasedRawBuilder, type Kysely } from 'kysely';
import { dialectOf } from './dialect.js';
import type { DB } from './schema.js';

/** `table as alias`, read through `index` on SQLite. */
export function indexedBy<T, A extends string>(db: Kysely<DB>, table: string, alias: A, index: string): AliasedRawBuilder<T, A> {
  const as = dialectOf(db) === 'sqlite' ? sql`${sql.id(alias)} indexed by ${sql.id(index)}` : sql.id(alias);
  return sql<T>`${sql.table(table)}`.as<A>(as);
}
