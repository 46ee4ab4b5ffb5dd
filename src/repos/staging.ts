// The staging tables of an import (services/write/): every valid line of the file is copied here
// first, under its line number; then references are resolved against them (staging-references.ts)
// and each record type is applied from them in SQL. Temporary tables of the writing transaction:
// created inside it (a rollback takes them back on both databases), dropped at COMMIT on
// PostgreSQL (`on commit drop`) and by dropStaging on SQLite. They hold one import's lines of one
// clinic, so the queries that read only them take no clinic id; those that touch stored rows do.
import { CompiledQuery, sql, type Kysely } from 'kysely';
import { COLLECTIONS, inWriteOrder, REFERRED, REFERRING, type RecordType } from '../collections/index.js';
import { dialectOf, type Dialect } from '../db/dialect.js';
import type { DB } from '../db/schema.js';
import { insertRows, RECORD_COLUMNS, type Column, type RecordTable } from './writes.js';

export const STAGED: Record<RecordTable, string> = inWriteOrder((c) => `import_${c.name}`);

/** The columns each staged line holds: its line number, then the record's columns. */
const STAGED_COLUMNS: Record<RecordTable | 'deletions' | 'bad_refs', readonly Column[]> = {
  ...inWriteOrder((c): readonly Column[] => [['line', 'int8'], ['id', 'text'], ...RECORD_COLUMNS[c.name]]),
  // a deletion line; `run`: consecutive deletion lines of one type share one
  deletions: [
    ['line', 'int8'],
    ['run', 'int8'],
    ['type', 'text'],
    ['id', 'text'],
  ],
  // the clienta_id of a line with other problems (still checked, to report it too)
  bad_refs: [
    ['line', 'int8'],
    ['clienta_id', 'text'],
  ],
};

export type StagedTable = keyof typeof STAGED_COLUMNS;

const tableName = (t: StagedTable) => (t === 'deletions' || t === 'bad_refs' ? `import_${t}` : STAGED[t]);

function columnDdl(dialect: Dialect, [name, type]: Column): string {
  if (name === 'line') return dialect === 'sqlite' ? 'line integer primary key' : 'line int8 primary key';
  if (dialect === 'sqlite') return `${name} ${type === 'text' ? 'text' : 'integer'}`;
  // Compared with the record tables' ids, which are collate "C".
  return `${name} ${type}${name === 'id' || name === 'clienta_id' ? ' collate "C"' : ''}`;
}

export async function createStaging(db: Kysely<DB>): Promise<void> {
  const dialect = dialectOf(db);
  const suffix = dialect === 'postgres' ? ' on commit drop' : '';
  for (const t of Object.keys(STAGED_COLUMNS) as StagedTable[]) {
    const cols = STAGED_COLUMNS[t].map((c) => columnDdl(dialect, c));
    // `tipo`: the event a line's write made, kept here until it can be stored (markEvents);
    // `later`: the record a line refers to comes later in the file (staging-references.ts).
    if (t in COLLECTIONS) cols.push(...(REFERRING.includes(t as never) ? ['later integer'] : []), 'tipo text');
    await sql.raw(`create temporary table ${tableName(t)} (${cols.join(', ')})${suffix}`).execute(db);
  }
  // The referred-to records' lines by id, and the deletions: what a reference is resolved against.
  await sql.raw(`create index ${STAGED[REFERRED]}_by_id on ${STAGED[REFERRED]} (id, line)`).execute(db);
  await sql.raw('create index import_deletions_by_id on import_deletions (type, id, line)').execute(db);
}

/** SQLite: the staging tables go (PostgreSQL drops them at COMMIT). */
export async function dropStaging(db: Kysely<DB>): Promise<void> {
  if (dialectOf(db) !== 'sqlite') return;
  for (const t of Object.keys(STAGED_COLUMNS) as StagedTable[]) await sql.raw(`drop table if exists temp.${tableName(t)}`).execute(db);
}

/** Copies lines into a staging table (objects keyed by column name, `line` included). */
export function stage(db: Kysely<DB>, table: StagedTable, rows: readonly Record<string, unknown>[]): Promise<void> {
  return insertRows(db, tableName(table), STAGED_COLUMNS[table], rows);
}

/** The next at most `size` staged lines of `table` after line `after`, through line `through`: the last, and how many. */
export async function nextChunk(
  db: Kysely<DB>,
  table: RecordTable,
  after: number,
  through: number,
  size: number,
): Promise<{ last: number; lines: number } | null> {
  const r = await sql<{ last: number | string | null; lines: number | string }>`select max(line) as last, count(*) as lines
    from (select line from ${sql.table(STAGED[table])} where line > ${after} and line <= ${through} order by line limit ${size}) t`.execute(
    db,
  );
  const row = r.rows[0];
  return row?.last == null ? null : { last: Number(row.last), lines: Number(row.lines) };
}

/** The next at most `size` deletion lines after line `after`, in line order. */
export async function nextDeletions(db: Kysely<DB>, after: number, size: number) {
  const r = await sql<{
    line: number | string;
    run: number | string;
    type: RecordType;
    id: string;
  }>`select line, run, type, id from import_deletions where line > ${after} order by line limit ${size}`.execute(db);
  return r.rows.map((x) => ({ ...x, line: Number(x.line), run: Number(x.run) }));
}

/**
 * What a write of a staged chunk reads and returns of each row: the count tables' keys, and what
 * the records that refer to it show of it (a clienta's name and phone).
 */
export const KEY_COLUMNS: Record<RecordTable, readonly string[]> = inWriteOrder((c) => [
  ...c.counts.by,
  ...new Set(REFERRING.flatMap((n) => (COLLECTIONS[n].refersTo === c.name ? COLLECTIONS[n].showsOfReferred : []))),
]);

export type Keys = { id: string } & Record<string, string | number>;

const texts = new Map<string, string>();
function once(key: string, make: () => string): string {
  let t = texts.get(key);
  if (t === undefined) texts.set(key, (t = make()));
  return t;
}

/**
 * `line` is the last line of its id among lines `range` of table `from`: one statement may not
 * write a row twice. PostgreSQL gets the lines as one array (computed once; as a subquery it was
 * planned per row, with statistics that do not know the staged lines).
 */
export function lastLines(d: Dialect, from: string, range: string): string {
  const last = `select max(line) from ${from} where ${range} group by id`;
  return d === 'postgres' ? `= any(array(${last}))` : `in (${last})`;
}

/** $n on PostgreSQL (with its type), ? on SQLite. */
const param = (d: Dialect, n: number, type: string) => (d === 'postgres' ? `$${n}::${type}` : '?');

/** Stored keys of the records a staged chunk (lines after, through] names: which exist, and what they count as. */
export async function storedKeys(db: Kysely<DB>, table: RecordTable, clinicId: string, after: number, through: number): Promise<Keys[]> {
  const d = dialectOf(db);
  const text = once(`keys:${d}:${table}`, () => {
    const staged = `select id from ${STAGED[table]} where line > ${param(d, 2, 'int8')} and line <= ${param(d, 3, 'int8')}`;
    // PostgreSQL: the ids as one array, then primary-key look-ups (a semi-join could scan every clinic's rows).
    const ids = d === 'postgres' ? `= any(array(${staged}))` : `in (${staged})`;
    return `select id, ${KEY_COLUMNS[table].join(', ')} from ${table} where clinic_id = ${param(d, 1, 'text')} and id ${ids}`;
  });
  return (await db.executeQuery<Keys>(CompiledQuery.raw(text, [clinicId, after, through]))).rows;
}

/**
 * Writes a staged chunk (lines after, through] into its table, the last line of each id (one
 * statement may not write a row twice). 'upsert' rewrites only rows whose values differ
 * (updated_at, the time of the change, is not compared), so re-importing a file changes nothing;
 * RETURNING names the rows written, new or changed: the import's events. 'insert': rows known to
 * be new (a fresh demo clinic).
 */
export async function writeStaged(
  db: Kysely<DB>,
  table: RecordTable,
  mode: 'insert' | 'upsert',
  clinicId: string,
  at: number,
  after: number,
  through: number,
): Promise<Keys[]> {
  const d = dialectOf(db);
  const text = once(`write:${d}:${table}:${mode}`, () => {
    const cols = ['id', ...RECORD_COLUMNS[table].map(([c]) => c)];
    const from = STAGED[table];
    const range = `line > ${param(d, 3, 'int8')} and line <= ${param(d, 4, 'int8')}`;
    let q =
      `insert into ${table} (clinic_id, ${cols.join(', ')}, updated_at)` +
      ` select ${param(d, 1, 'text')}, ${cols.join(', ')}, ${param(d, 2, 'int8')} from ${from}` +
      ` where line ${lastLines(d, from, range)}`;
    if (mode === 'upsert') {
      const rest = cols.slice(1);
      q +=
        ` on conflict (clinic_id, id) do update set ${[...rest, 'updated_at'].map((c) => `${c} = excluded.${c}`).join(', ')}` +
        ` where (${rest.map((c) => `${table}.${c}`).join(', ')}) ${d === 'postgres' ? 'is distinct from' : 'is not'}` +
        ` (${rest.map((c) => `excluded.${c}`).join(', ')})`;
    }
    return `${q} returning id, ${KEY_COLUMNS[table].join(', ')}`;
  });
  return (await db.executeQuery<Keys>(CompiledQuery.raw(text, [clinicId, at, after, through]))).rows;
}

/**
 * Keeps on the staged lines (after, through] that the write of records `ids` took, the event it
 * made (`tipo`), until the event can be stored: a clienta's once her stretch's citas and calls are
 * written, a cita's or call's whose clienta comes later at the end of the import.
 */
export async function markEvents(
  db: Kysely<DB>,
  table: RecordTable,
  tipo: string,
  after: number,
  through: number,
  ids: readonly string[],
): Promise<void> {
  const d = dialectOf(db);
  const last = sql.raw(lastLines(d, STAGED[table], `line > ${Number(after)} and line <= ${Number(through)}`));
  for (let i = 0; i < ids.length; i += 5_000) {
    const chunk = ids.slice(i, i + 5_000);
    const which = d === 'postgres' ? sql`id = any(${chunk}::text[])` : sql`id in (${sql.join(chunk)})`;
    await sql`update ${sql.table(STAGED[table])} set tipo = ${tipo} where line ${last} and ${which}`.execute(db);
  }
}

/** The events kept on staged lines (after, through] of `table`, in line order, at most `n`. */
export async function markedEvents(db: Kysely<DB>, table: RecordTable, after: number, through: number, n: number) {
  const r = await sql<{ line: number | string; id: string; tipo: string }>`select line, id, tipo from ${sql.table(STAGED[table])}
    where tipo is not null and line > ${after} and line <= ${through} order by line limit ${n}`.execute(db);
  return r.rows.map((x) => ({ ...x, line: Number(x.line) }));
}
