// The writes of import and demo, which run inside one transaction (services/write/session.ts
// opens it): the record tables' columns, multi-row inserts, the per-day and per-vip count
// tables, and the transaction's set-up (the clinic's writer lock, foreign keys, SQLite's page
// cache). Millions of rows go through here, so the SQL text is built once per (table, row count)
// and sent without Kysely's query builder: PostgreSQL gets one array per column through unnest()
// (a handful of parameters however many rows), SQLite a multi-row VALUES of a few fixed sizes
// whose prepared statements db/sqlite-statements.ts caches. The event log and the request log
// write through insertRows too.
import { CompiledQuery, sql, type Kysely } from 'kysely';
import { COLLECTIONS, RECORD_COLUMNS, type CollectionName, type Column } from '../collections/index.js';
import { SQLITE_CACHE_KIB } from '../db/connect.js';
import { dialectOf, type Dialect } from '../db/dialect.js';
import type { DB } from '../db/schema.js';

export type RecordTable = CollectionName;
/** The record tables' columns (each collection's, src/collections/); the staging tables (staging.ts) have them too. */
export { RECORD_COLUMNS, type Column };

/** Every column of a record table, in table order. */
export function tableColumns(table: RecordTable): readonly Column[] {
  return [['clinic_id', 'text'], ['id', 'text'], ...RECORD_COLUMNS[table], ['updated_at', 'int8']];
}

/**
 * PostgreSQL: rows per statement (one array per column, one statement text). SQLite: the row
 * counts its multi-row statements are written for. A batch is cut into statements of these
 * sizes, largest first, so that however many rows come, the statements have a handful of shapes,
 * each prepared once (db/sqlite-statements.ts keeps the last 500): a statement for each distinct
 * remainder (a request log write of 2,837 rows ends with one of 337) was prepared every time, and
 * such statements pushed the service's hot reads out of that cache. 500 rows bind at most
 * 500 x 17 values, far below SQLite's limit of 32,766.
 */
const PG_ROWS_PER_STATEMENT = 5_000;
const SQLITE_SHAPES = [500, 100, 20, 5, 1] as const;

/** SQLite: the size of the next statement for `left` rows. */
function sqliteShape(left: number): number {
  return SQLITE_SHAPES.find((n) => n <= left) ?? 1;
}

/** `ignore`: a row whose key is already stored is left out (and the one stored left as it is). */
export type OnConflict = 'fail' | 'ignore';

const insertStatements = new Map<string, string>();

function insertSql(dialect: Dialect, table: string, columns: readonly Column[], rows: number, onConflict: OnConflict): string {
  const key = `${dialect}:${table}:${dialect === 'sqlite' ? rows : 0}:${onConflict}`;
  let text = insertStatements.get(key);
  if (text === undefined) {
    const names = columns.map(([c]) => c);
    const source =
      dialect === 'postgres'
        ? `select * from unnest(${columns.map(([, t], i) => `$${i + 1}::${t}[]`).join(', ')})`
        : `values ${Array.from({ length: rows }, () => `(${names.map(() => '?').join(', ')})`).join(', ')}`;
    const ignore = onConflict === 'ignore';
    text =
      `insert${ignore && dialect === 'sqlite' ? ' or ignore' : ''} into ${table} (${names.join(', ')}) ${source}` +
      (ignore && dialect === 'postgres' ? ' on conflict do nothing' : '');
    insertStatements.set(key, text);
  }
  return text;
}

/**
 * Inserts `rows` (objects keyed by column name; absent is null) into `table`, in multi-row
 * statements: the one way the import, the event log and the request log write many rows.
 */
export async function insertRows(
  db: Kysely<DB>,
  table: string,
  columns: readonly Column[],
  rows: readonly object[],
  onConflict: OnConflict = 'fail',
): Promise<void> {
  const dialect = dialectOf(db);
  const names = columns.map(([c]) => c);
  for (let i = 0; i < rows.length;) {
    const n = dialect === 'postgres' ? Math.min(PG_ROWS_PER_STATEMENT, rows.length - i) : sqliteShape(rows.length - i);
    const chunk = rows.slice(i, i + n) as readonly Record<string, unknown>[];
    i += n;
    let params: unknown[];
    if (dialect === 'postgres') params = names.map((c) => chunk.map((r) => r[c] ?? null));
    else {
      params = new Array<unknown>(chunk.length * names.length);
      let k = 0;
      for (const r of chunk) for (const c of names) params[k++] = r[c] ?? null;
    }
    await db.executeQuery(CompiledQuery.raw(insertSql(dialect, table, columns, n, onConflict), params));
  }
}

/** Count changes keyed by the count table's key after clinic_id: [dia, estado] etc. */
export type CountDeltas = Map<string, { key: (string | number)[]; n: number }>;

export function addDelta(deltas: CountDeltas, key: (string | number)[], n: number): void {
  const k = key.join('\u0000');
  const d = deltas.get(k);
  if (d) d.n += n;
  else deltas.set(k, { key, n });
}

export const COUNT_TABLES = {
  citas_por_dia: ['dia', 'estado'],
  llamadas_por_dia: ['dia', 'resultado'],
  clientas_por_vip: ['vip'],
} as const;

/**
 * Applies count changes (n = n + delta) and drops rows that reach zero. The per-day tables have
 * at most a few thousand rows per clinic, so this is cheap whatever the import's size.
 */
export async function applyCountDeltas(
  db: Kysely<DB>,
  clinicId: string,
  table: keyof typeof COUNT_TABLES,
  deltas: CountDeltas,
): Promise<void> {
  const keyCols = COUNT_TABLES[table];
  const changed = [...deltas.values()].filter((d) => d.n !== 0);
  for (let i = 0; i < changed.length; i += 500) {
    const values = changed.slice(i, i + 500).map((d) => ({
      clinic_id: clinicId,
      ...Object.fromEntries(keyCols.map((c, j) => [c, d.key[j]])),
      n: d.n,
    }));
    await db
      .insertInto(table)
      .values(values as never)
      .onConflict((oc) =>
        oc.columns(['clinic_id', ...keyCols] as never).doUpdateSet({ n: sql`${sql.ref(`${table}.n`)} + excluded.n` } as never),
      )
      .execute();
  }
  if (changed.length > 0) await db.deleteFrom(table).where('clinic_id', '=', clinicId).where('n', '<=', 0).execute();
}

/** Recomputes the clinic's per-day and per-vip counts from the rows themselves (repair tool). */
export async function refreshCounts(db: Kysely<DB>, clinicId: string): Promise<void> {
  for (const c of Object.values(COLLECTIONS)) await db.deleteFrom(c.counts.table).where('clinic_id', '=', clinicId).execute();
  for (const c of Object.values(COLLECTIONS)) {
    const by = sql.raw(c.counts.by.join(', '));
    await sql`insert into ${sql.table(c.counts.table)} (clinic_id, ${by}, n)
    select clinic_id, ${by}, count(*) from ${sql.table(c.name)} where clinic_id = ${clinicId} group by clinic_id, ${by}`.execute(db);
  }
}

/**
 * Serialises writers of one clinic's data (import, demo): the count deltas read stored rows, so
 * two concurrent imports into one clinic must not interleave. SQLite has one writer anyway.
 */
export async function lockClinicData(db: Kysely<DB>, clinicId: string): Promise<void> {
  if (dialectOf(db) === 'postgres') await sql`select pg_advisory_xact_lock(hashtext(${`clinic-data:${clinicId}`}))`.execute(db);
}

/**
 * The same lock, if it is free now (PostgreSQL; SQLite's single writer was already taken by the
 * transaction): for background work that should skip a clinic being written rather than wait.
 */
export async function tryLockClinicData(db: Kysely<DB>, clinicId: string): Promise<boolean> {
  if (dialectOf(db) !== 'postgres') return true;
  const r = await sql<{ ok: boolean }>`select pg_try_advisory_xact_lock(hashtext(${`clinic-data:${clinicId}`})) as ok`.execute(db);
  return r.rows[0]?.ok === true;
}

/**
 * When the references of citas and calls to their clientas are checked. 'commit': an import may
 * list a cita before its clienta (the keys are DEFERRABLE INITIALLY DEFERRED; SQLite also defers
 * its other keys for the transaction). 'statement': rows written in order (the demo), so
 * PostgreSQL checks each statement instead of a million rows at COMMIT, which would outlast the
 * statement timeout of a runtime opened for the API (e.g. a benchmark's data set).
 */
export async function checkReferencesAt(db: Kysely<DB>, when: 'commit' | 'statement'): Promise<void> {
  if (dialectOf(db) === 'sqlite') await sql`pragma defer_foreign_keys = on`.execute(db);
  else if (when === 'statement') await sql`set constraints all immediate`.execute(db);
}

/** SQLite page cache (KiB) for a bulk write: the hot index pages stay in memory; it bounds the RSS of an import. */
const BULK_CACHE_KIB = 262_144;
/** ... and for the temporary tables an import stages its lines in (they spill to a temporary file beyond it). */
const STAGING_CACHE_KIB = 65_536;

/**
 * Runs `fn` with a larger SQLite page cache (a ceiling, not an allocation), restoring the
 * connection's own setting after. Random-order index inserts (UUIDs) are 2x faster once the
 * index pages fit. PostgreSQL: the server's shared_buffers decide; nothing to do here.
 */
export async function withBulkCache<T>(db: Kysely<DB>, fn: () => Promise<T>): Promise<T> {
  if (dialectOf(db) !== 'sqlite') return fn();
  const before = await sql<{ cache_size: number }>`pragma cache_size`.execute(db);
  const temp = await sql<{ cache_size: number }>`pragma temp.cache_size`.execute(db);
  await sql.raw(`pragma cache_size = -${BULK_CACHE_KIB}`).execute(db);
  await sql.raw(`pragma temp.cache_size = -${STAGING_CACHE_KIB}`).execute(db);
  try {
    return await fn();
  } finally {
    await sql.raw(`pragma cache_size = ${Number(before.rows[0]?.cache_size ?? -SQLITE_CACHE_KIB)}`).execute(db);
    await sql.raw(`pragma temp.cache_size = ${Number(temp.rows[0]?.cache_size ?? 0)}`).execute(db);
  }
}
