// The few hottest queries, built with Kysely once per database, then re-run with new values: the
// citas page and its count (the cold page), and the two reads of every list's ETag (the clinic's
// versions, the next cita start: all a 304 or a kept page costs). Every other query is a plain
// Kysely query. Which ones, and the bench figures of why: docs/architecture.md, "Precompiled
// statements".
//
// Building a Kysely query (an immutable operation-node tree) and compiling it to SQL costs more
// per request than running the prepared statement for a small page does. A query whose shape
// never changes is built once with placeholder values ("slots"), compiled, and kept: each request
// only swaps its values into the parameter list. The builder gets slots, not values: it must only
// place them in the query (where, limit, ...), never branch on them; a query with optional parts
// gets one compiledOnce per shape.
//
// On SQLite the statement then runs directly on the driver when the connection is idle (no
// transaction open on it), its rows read as arrays (sqlite-statements.ts): Kysely's executor,
// with its connection lock and promise hops, cost more than a primary-key read (about 20 µs
// against 2: the ETag's version read of a 304).
//
// On SQLite each value goes into the query as `+?`, not `?` (placed() below): a statement
// prepared once must also be planned once. better-sqlite3 clears a statement's bindings after
// every run, and SQLite then prepares the statement again on its next run if its planner looked
// at a parameter's value: a LIMIT's, or an equality's in a join or an ordered query (another
// value might plan differently). The citas page was parsed and planned again on every request:
// about 50 µs of CPU of a page of 0.40 ms. The unary plus leaves the value as it is (it drops a
// column's affinity, and a parameter has none), the planner does not look through it, and the
// indexes are used as before (test/db/plans.test.ts plans this same text). A constant the builder
// places itself is a parameter too: a constant LIMIT is written as a literal (`sql.lit`).
import { CompiledQuery, sql, type Compilable, type Kysely } from 'kysely';
import { dialectOf } from './dialect.js';
import type { DB } from './schema.js';
import { directOf } from './sqlite-statements.js';

const SLOT = Symbol('compiled-once slot');
interface Slot {
  readonly [SLOT]: string;
}

function isSlot(v: unknown): v is Slot {
  return typeof v === 'object' && v !== null && SLOT in v;
}

interface Compiled {
  sql: string;
  /** per parameter: the name of the value to put there, or a constant the builder put itself */
  params: readonly ({ slot: string } | { constant: unknown })[];
}

/**
 * The values as the builder places them: on SQLite each as `+?` (see the top). The builder only
 * places values, so an expression stands in for each (typed as the value it wraps).
 */
function placed<P extends Record<string, unknown>>(db: Kysely<DB>, names: readonly (keyof P & string)[], values: P): P {
  if (dialectOf(db) !== 'sqlite') return values;
  return Object.fromEntries(names.map((n) => [n, sql`+${values[n]}`])) as unknown as P;
}

export function compiledOnce<P extends Record<string, unknown>, R>(
  names: readonly (keyof P & string)[],
  build: (db: Kysely<DB>, p: P) => Compilable<R>,
): (db: Kysely<DB>, values: P) => Promise<R[]> {
  const byDb = new WeakMap<Kysely<DB>, Compiled>();
  const compile = (db: Kysely<DB>): Compiled => {
    const slots = Object.fromEntries(names.map((n) => [n, { [SLOT]: n } satisfies Slot])) as unknown as P;
    const q = build(db, placed(db, names, slots)).compile();
    const compiled: Compiled = {
      sql: q.sql,
      params: q.parameters.map((p) => (isSlot(p) ? { slot: p[SLOT] } : { constant: p })),
    };
    byDb.set(db, compiled);
    return compiled;
  };
  return async (db, values) => {
    // Plugins transform query trees (e.g. the plan capture of db/explain.ts); a compiled-once
    // query has none to give them, so a handle with plugins builds the query on every run.
    if (db.getExecutor().plugins.length > 0) return (await db.executeQuery<R>(build(db, placed(db, names, values)))).rows;
    const c = byDb.get(db) ?? compile(db);
    const params = c.params.map((p) => ('slot' in p ? values[p.slot] : p.constant));
    const sqlite = directOf(db);
    if (sqlite !== undefined && sqlite.idle()) return sqlite.read(c.sql, params) as R[];
    const result = await db.executeQuery<R>(CompiledQuery.raw(c.sql, params));
    return result.rows;
  };
}
