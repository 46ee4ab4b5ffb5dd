// The statements Kysely's SQLite driver runs, compiled once and re-used, with rows built in JS.
//
// Kysely calls `prepare(sql)` for every query and better-sqlite3 does not cache, so statements
// are kept here, keyed by their SQL text (the hot path's queries have a handful of shapes).
//
// Rows: better-sqlite3 builds each result row as an object natively, key by key, which costs
// more than the query itself on a 100-row page (measured on the citas page: 0.53 ms with
// objects, 0.33 ms as arrays). So readers run in raw mode (arrays) and each statement gets a
// small function, generated once from its column names, that builds the row as an object
// literal; V8 gives those one shape, and the page costs 0.35 ms.
import type BetterSqlite3 from 'better-sqlite3';

type Row = Record<string, unknown>;
type RowBuilder = (values: unknown[]) => Row;

/** The part of a better-sqlite3 Statement that Kysely's SqliteConnection uses. */
export interface DriverStatement {
  readonly reader: boolean;
  all(parameters: readonly unknown[]): Row[];
  run(parameters: readonly unknown[]): BetterSqlite3.RunResult;
  iterate(parameters: readonly unknown[]): IterableIterator<Row>;
}

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

function wrap(stmt: BetterSqlite3.Statement): DriverStatement {
  if (!stmt.reader) {
    return {
      reader: false,
      all: () => [],
      run: (p) => stmt.run(...p),
      iterate: () => [][Symbol.iterator](),
    };
  }
  const build = rowBuilder(stmt.columns().map((c) => c.name));
  stmt.raw(true);
  return {
    reader: true,
    all: (p) => {
      const rows = stmt.all(...p) as unknown[][];
      const out = new Array<Row>(rows.length);
      for (let i = 0; i < rows.length; i++) out[i] = build(rows[i]!);
      return out;
    },
    run: (p) => stmt.run(...p),
    *iterate(p) {
      for (const values of stmt.iterate(...p) as IterableIterator<unknown[]>) yield build(values);
    },
  };
}

export type StatementCache = ReturnType<typeof statementCache>;

/** A stand-in for the better-sqlite3 Database that Kysely's SqliteDialect is given. */
export function statementCache(raw: BetterSqlite3.Database, max = 500) {
  const statements = new Map<string, DriverStatement>();
  return {
    /**
     * True when the connection is in no transaction: a statement run now, directly,
     * reads committed data only and cannot land inside a transaction of this process (Kysely
     * holds its connection lock across a transaction's awaits, and the BEGIN is on this connection).
     */
    idle(): boolean {
      return !raw.inTransaction;
    },
    prepare(sqlText: string): DriverStatement {
      let stmt = statements.get(sqlText);
      if (!stmt) {
        stmt = wrap(raw.prepare(sqlText));
        // Shapes are few; a flood of distinct SQL (e.g. ad-hoc scripts) must not grow without end.
        if (statements.size >= max) statements.clear();
        statements.set(sqlText, stmt);
      }
      return stmt;
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
