// Query plans of the queries the service really sends, for the plan tests (test/db/plans.test.ts)
// and `npm run explain`: capture what a use-case executes, then EXPLAIN each statement.
import { CompiledQuery, type Kysely, type KyselyPlugin } from 'kysely';
import { dialectOf } from './dialect.js';
import type { DB } from './schema.js';

/** A handle that records every statement run through it (SQL and parameters), and runs it. */
export function capturing(db: Kysely<DB>): { db: Kysely<DB>; queries: CompiledQuery[] } {
  const queries: CompiledQuery[] = [];
  const executor = db.getExecutor();
  // Subqueries pass through transformQuery too; only a query that returns a result was run.
  const compiled = new Map<unknown, CompiledQuery>();
  const plugin: KyselyPlugin = {
    transformQuery(args) {
      compiled.set(args.queryId, executor.compileQuery(args.node, args.queryId));
      return args.node;
    },
    async transformResult(args) {
      const q = compiled.get(args.queryId);
      if (q) queries.push(q);
      return args.result;
    },
  };
  return { db: db.withPlugin(plugin), queries };
}

export interface ExplainOptions {
  /**
   * PostgreSQL planner switches for the statement, e.g. { enable_seqscan: 'off' }: on a small test
   * data set a sequential scan is cheaper than any index, which says nothing about scale.
   */
  settings?: Record<string, string>;
  /** PostgreSQL: EXPLAIN ANALYZE (runs the statement; shows real row counts and times). */
  analyze?: boolean;
}

/** The plan of one statement, one line per node: SQLite's EXPLAIN QUERY PLAN tree or PostgreSQL's text plan. */
export async function explain(db: Kysely<DB>, query: CompiledQuery, opts: ExplainOptions = {}): Promise<string[]> {
  if (dialectOf(db) === 'sqlite') {
    const r = await db.executeQuery<{ id: number; parent: number; detail: string }>(
      CompiledQuery.raw(`explain query plan ${query.sql}`, [...query.parameters]),
    );
    const depth = new Map<number, number>([[0, -1]]);
    return r.rows.map((row) => {
      const d = (depth.get(row.parent) ?? -1) + 1;
      depth.set(row.id, d);
      return `${'  '.repeat(d)}${row.detail}`;
    });
  }
  // SET LOCAL needs a transaction, and the EXPLAIN must run on that same connection.
  return db.transaction().execute(async (trx) => {
    for (const [name, value] of Object.entries(opts.settings ?? {})) {
      if (!/^[a-z_]+$/.test(name) || !/^[A-Za-z0-9_.]+$/.test(value)) throw new Error(`bad planner setting ${name}=${value}`);
      await trx.executeQuery(CompiledQuery.raw(`set local ${name} = ${value}`));
    }
    const how = opts.analyze ? '(analyze, buffers off, timing on, summary on)' : '(costs off)';
    const r = await trx.executeQuery<{ 'QUERY PLAN': string }>(CompiledQuery.raw(`explain ${how} ${query.sql}`, [...query.parameters]));
    return r.rows.map((row) => row['QUERY PLAN']);
  });
}

/** Statements of a capture that read (the plans worth showing). */
export function selects(queries: readonly CompiledQuery[]): CompiledQuery[] {
  return queries.filter((q) => /^\s*(with|select)\b/i.test(q.sql));
}
