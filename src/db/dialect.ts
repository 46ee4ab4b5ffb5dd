import { PostgresAdapter, type Kysely } from 'kysely';

export type Dialect = 'sqlite' | 'postgres';

/**
 * The dialect behind a Kysely handle (also a transaction's), for the few queries that need a
 * per-dialect form (search indexes, bulk inserts). Repositories take the handle only, so they
 * ask it rather than having the dialect threaded through every caller.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- any database schema: only the adapter is read
export function dialectOf(db: Kysely<any>): Dialect {
  return db.getExecutor().adapter instanceof PostgresAdapter ? 'postgres' : 'sqlite';
}
