// The statements of the SQLite connection, prepared once. Kysely's SqliteDialect prepares every
// query it runs and better-sqlite3 caches nothing, so the database object Kysely is given
// prepares through a memo keyed by the SQL text (the service's queries have a handful of shapes).
//
// The hottest reads (db/compiled-once.ts, run on the driver directly while the connection is in
// no transaction) also read their rows as arrays, each made into an object by a small function
// generated once from the statement's column names: better-sqlite3 builds each row's object
// natively, key by key, which cost more than the query itself on the 100-row citas page (0.53 ms
// with its objects, 0.33 ms as arrays, 0.35 ms with the generated function; V8 gives those
// objects one shape). Every other query's rows are better-sqlite3's own objects.
import type BetterSqlite3 from 'better-sqlite3';
import { memo } from '../memo.js';

type Row = Record<string, unknown>;
type RowBuilder = (values: unknown[]) => Row;

function rowBuilder(columns: string[]): RowBuilder {
  // Duplicate names keep the last value, as better-sqlite3's own objects do. An object literal
  // would set the prototype for "__proto__" instead of storing it: such a row is assigned onto a
  // prototype-less object.
  if (columns.includes('__proto__')) {
    return (values) => {
      const row: Row = Object.create(null);
      columns.forEach((c, i) => {
        row[c] = values[i];
      });
      return row;
    };
  }
  const body = `return {${columns.map((c, i) => `${JSON.stringify(c)}: v[${i}]`).join(', ')}};`;
  return new Function('v', body) as RowBuilder;
}

/** All the rows of a read, as arrays made into objects by its generated builder. */
function arrayReader(stmt: BetterSqlite3.Statement): (params: readonly unknown[]) => Row[] {
  const build = rowBuilder(stmt.columns().map((c) => c.name));
  stmt.raw(true);
  return (params) => {
    const rows = stmt.all(...params) as unknown[][];
    const out = new Array<Row>(rows.length);
    for (let i = 0; i < rows.length; i++) out[i] = build(rows[i]!);
    return out;
  };
}

export type StatementCache = ReturnType<typeof statementCache>;

/** A stand-in for the better-sqlite3 Database that Kysely's SqliteDialect is given. */
export function statementCache(raw: BetterSqlite3.Database) {
  const statements = memo(500, (sqlText: string) => raw.prepare(sqlText));
  // Statements of their own: a statement in raw mode would give Kysely arrays.
  const readers = memo(100, (sqlText: string) => arrayReader(raw.prepare(sqlText)));
  return {
    /**
     * True when the connection is in no transaction: a statement run now, directly,
     * reads committed data only and cannot land inside a transaction of this process (Kysely
     * holds its connection lock across a transaction's awaits, and the BEGIN is on this connection).
     */
    idle(): boolean {
      return !raw.inTransaction;
    },
    prepare(sqlText: string): BetterSqlite3.Statement {
      return statements(sqlText);
    },
    /** The rows of a hot read run directly (compiled-once.ts), built as described at the top. */
    read(sqlText: string, params: readonly unknown[]): Row[] {
      return readers(sqlText)(params);
    },
    close() {
      raw.close();
    },
  };
}

/**
 * The statement cache behind a Kysely handle opened by db/connect.ts, for the hot reads that
 * db/compiled-once.ts runs directly when the connection is idle: better-sqlite3 is synchronous,
 * and Kysely's executor (connection lock, promises) cost more than a primary-key read itself.
 */
const direct = new WeakMap<object, StatementCache>();

export function registerDirect(db: object, cache: StatementCache): void {
  direct.set(db, cache);
}

export function directOf(db: object): StatementCache | undefined {
  return direct.get(db);
}
