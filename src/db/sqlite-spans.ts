// With tracing on (spans.ts), a span per SQLite query: its SQL text only, never its values (they
// are parameters). There is no maintained OpenTelemetry instrumentation for better-sqlite3, so the
// statement cache Kysely and the hot reads use (sqlite-statements.ts) is wrapped here; with
// tracing off, connect.ts does not wrap it, and a query costs nothing more. A query outside a
// trace (the background pollers) makes no span. PostgreSQL's queries get theirs from
// @opentelemetry/instrumentation-pg.
import type BetterSqlite3 from 'better-sqlite3';
import type { SpanMaker } from '../spans.js';
import type { StatementCache } from './sqlite-statements.js';

const OPTIONS = { kind: 'client', childOnly: true } as const;

function attributes(sqlText: string) {
  // The operation's first word (select, insert, ...), as the database semantic conventions name it.
  const operation = /^\s*(\w+)/.exec(sqlText)?.[1]?.toUpperCase() ?? 'SQL';
  return {
    name: `${operation} sqlite`,
    attributes: { 'db.system.name': 'sqlite', 'db.operation.name': operation, 'db.query.text': sqlText },
  };
}

/** The statement, its runs made in spans (the methods Kysely's SqliteDriver calls). */
function tracedStatement(stmt: BetterSqlite3.Statement, sqlText: string, spans: SpanMaker): BetterSqlite3.Statement {
  const { name, attributes: attrs } = attributes(sqlText);
  return {
    reader: stmt.reader,
    all: (...params: unknown[]) => spans.inSpan(name, attrs, () => stmt.all(...params), OPTIONS),
    get: (...params: unknown[]) => spans.inSpan(name, attrs, () => stmt.get(...params), OPTIONS),
    run: (...params: unknown[]) => spans.inSpan(name, attrs, () => stmt.run(...params), OPTIONS),
    iterate: (...params: unknown[]) => spans.inSpan(name, attrs, () => stmt.iterate(...params), OPTIONS),
  } as unknown as BetterSqlite3.Statement;
}

export function tracedStatementCache(cache: StatementCache, spans: SpanMaker): StatementCache {
  return {
    ...cache,
    prepare: (sqlText) => tracedStatement(cache.prepare(sqlText), sqlText, spans),
    read: (sqlText, params) => {
      const { name, attributes: attrs } = attributes(sqlText);
      return spans.inSpan(name, attrs, () => cache.read(sqlText, params), OPTIONS);
    },
  };
}
