// The readiness probe's query: the database answers a trivial statement.
import { sql, type Kysely } from 'kysely';
import type { DB } from '../db/schema.js';

export async function ping(db: Kysely<DB>): Promise<boolean> {
  const r = await sql<{ one: number }>`select 1 as one`.execute(db);
  return Number(r.rows[0]?.one) === 1;
}
