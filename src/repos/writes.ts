// Bulk writes used by import and demo generation. Callers run these inside one transaction.
// Millions of rows go through here, so the SQL text is built once per (table, row count) and
// sent without Kysely's query builder: PostgreSQL gets one array per column through unnest()
// (a handful of parameters however many rows), SQLite a multi-row VALUES whose prepared
// statement db/sqlite-statements.ts caches.
import { CompiledQuery, sql, type Insertable, type Kysely } from 'kysely';
import { dialectOf, type Dialect } from '../db/dialect.js';
import { inIds } from '../db/in-ids.js';
import type { CitasTable, ClientasTable, DB, LlamadasTable } from '../db/schema.js';

/** Rows per statement: SQLite binds each value (limit 32766), PostgreSQL sends arrays. */
const ROWS_PER_STATEMENT: Record<Dialect, number> = { sqlite: 500, postgres: 5000 };

/** 'insert': rows known to be new (a fresh demo clinic); 'upsert': replace by (clinic_id, id). */
export type WriteMode = 'insert' | 'upsert';

type Table = 'clientas' | 'citas' | 'llamadas';

interface TableSpec {
  /** column name and its PostgreSQL type, key columns first */
  columns: readonly (readonly [string, string])[];
}

const SPECS: Record<Table, TableSpec> = {
  clientas: {
    columns: [
      ['clinic_id', 'text'],
      ['id', 'text'],
      ['nombre', 'text'],
      ['nombre_norm', 'text'],
      ['telefono', 'text'],
      ['telefono_digits', 'text'],
      ['email', 'text'],
      ['idioma', 'text'],
      ['vip', 'int4'],
      ['cliente_desde', 'text'],
      ['created_at', 'int8'],
      ['updated_at', 'int8'],
    ],
  },
  citas: {
    columns: [
      ['clinic_id', 'text'],
      ['id', 'text'],
      ['clienta_id', 'text'],
      ['fecha_hora', 'int8'],
      ['dia', 'text'],
      ['servicio', 'text'],
      ['duracion_min', 'int4'],
      ['precio_cents', 'int8'],
      ['estado', 'text'],
      ['profesional_nombre', 'text'],
      ['sede_nombre', 'text'],
      ['notas', 'text'],
      ['created_at', 'int8'],
      ['updated_at', 'int8'],
    ],
  },
  llamadas: {
    columns: [
      ['clinic_id', 'text'],
      ['id', 'text'],
      ['clienta_id', 'text'],
      ['fecha_hora', 'int8'],
      ['dia', 'text'],
      ['cliente_nombre', 'text'],
      ['telefono_caller', 'text'],
      ['duracion_segundos', 'int4'],
      ['resultado', 'text'],
      ['idioma', 'text'],
      ['created_at', 'int8'],
      ['updated_at', 'int8'],
    ],
  },
};

const statements = new Map<string, string>();

/** The INSERT for `table` and `rows` rows (SQLite) or any row count (PostgreSQL), cached. */
function insertSql(dialect: Dialect, table: Table, mode: WriteMode, rows: number): string {
  const key = `${dialect}:${table}:${mode}:${dialect === 'sqlite' ? rows : 0}`;
  let text = statements.get(key);
  if (text !== undefined) return text;
  const cols = SPECS[table].columns;
  const names = cols.map(([c]) => c);
  const source =
    dialect === 'postgres'
      ? `select * from unnest(${cols.map(([, t], i) => `$${i + 1}::${t}[]`).join(', ')})`
      : `values ${Array.from({ length: rows }, () => `(${names.map(() => '?').join(', ')})`).join(', ')}`;
  text = `insert into ${table} (${names.join(', ')}) ${source}`;
  if (mode === 'upsert') {
    // Only rows that differ are rewritten: re-importing a file changes nothing, not even a tuple
    // version or updated_at (which is the time of the change, so it is not compared). RETURNING
    // names the rows written: new or changed, the import's events.
    const rest = names.slice(2);
    const compared = rest.filter((c) => c !== 'updated_at');
    const distinct = dialect === 'postgres' ? 'is distinct from' : 'is not';
    text +=
      ` on conflict (clinic_id, id) do update set ${rest.map((c) => `${c} = excluded.${c}`).join(', ')}` +
      ` where (${compared.map((c) => `${table}.${c}`).join(', ')}) ${distinct} (${compared.map((c) => `excluded.${c}`).join(', ')})` +
      ' returning id';
  }
  statements.set(key, text);
  return text;
}

/** Writes `rows`; in 'upsert' mode returns the ids of the rows written (new or changed), else []. */
async function write(db: Kysely<DB>, table: Table, rows: readonly Record<string, unknown>[], mode: WriteMode): Promise<string[]> {
  const dialect = dialectOf(db);
  const names = SPECS[table].columns.map(([c]) => c);
  const step = ROWS_PER_STATEMENT[dialect];
  const written: string[] = [];
  for (let i = 0; i < rows.length; i += step) {
    const chunk = rows.slice(i, i + step);
    let params: unknown[];
    if (dialect === 'postgres') {
      params = names.map((c) => chunk.map((r) => r[c] ?? null));
    } else {
      params = new Array<unknown>(chunk.length * names.length);
      let k = 0;
      for (const r of chunk) for (const c of names) params[k++] = r[c] ?? null;
    }
    const result = await db.executeQuery<{ id: string }>(CompiledQuery.raw(insertSql(dialect, table, mode, chunk.length), params));
    for (const r of result.rows) written.push(r.id);
  }
  return written;
}

export function writeClientas(db: Kysely<DB>, rows: Insertable<ClientasTable>[], mode: WriteMode): Promise<string[]> {
  return write(db, 'clientas', rows as unknown as Record<string, unknown>[], mode);
}

export function writeCitas(db: Kysely<DB>, rows: Insertable<CitasTable>[], mode: WriteMode): Promise<string[]> {
  return write(db, 'citas', rows as unknown as Record<string, unknown>[], mode);
}

export function writeLlamadas(db: Kysely<DB>, rows: Insertable<LlamadasTable>[], mode: WriteMode): Promise<string[]> {
  return write(db, 'llamadas', rows as unknown as Record<string, unknown>[], mode);
}

/** Stored values, before an upsert, of the rows it will replace: the counts' old keys. */
export async function storedCitaKeys(db: Kysely<DB>, clinicId: string, ids: string[]) {
  return db
    .selectFrom('citas')
    .select(['id', 'dia', 'estado'])
    .where('clinic_id', '=', clinicId)
    .where(inIds(db, 'id', ids))
    .execute();
}

export async function storedLlamadaKeys(db: Kysely<DB>, clinicId: string, ids: string[]) {
  return db
    .selectFrom('llamadas')
    .select(['id', 'dia', 'resultado'])
    .where('clinic_id', '=', clinicId)
    .where(inIds(db, 'id', ids))
    .execute();
}

/** ... and of clientas, with what their citas and llamadas show of them (a change there changes those too). */
export async function storedClientaKeys(db: Kysely<DB>, clinicId: string, ids: string[]) {
  return db
    .selectFrom('clientas')
    .select(['id', 'vip', 'nombre', 'telefono'])
    .where('clinic_id', '=', clinicId)
    .where(inIds(db, 'id', ids))
    .execute();
}

// Deletions (import lines with "deleted": true) and their cascades. Each returns what the
// count deltas and the events need; ids are at most a batch (5,000).

export async function deleteCitas(db: Kysely<DB>, clinicId: string, ids: string[]) {
  if (ids.length === 0) return [];
  return db
    .deleteFrom('citas')
    .where('clinic_id', '=', clinicId)
    .where(inIds(db, 'id', ids))
    .returning(['id', 'dia', 'estado'])
    .execute();
}

export async function deleteLlamadas(db: Kysely<DB>, clinicId: string, ids: string[]) {
  if (ids.length === 0) return [];
  return db
    .deleteFrom('llamadas')
    .where('clinic_id', '=', clinicId)
    .where(inIds(db, 'id', ids))
    .returning(['id', 'dia', 'resultado'])
    .execute();
}

export async function deleteClientas(db: Kysely<DB>, clinicId: string, ids: string[]) {
  if (ids.length === 0) return [];
  return db
    .deleteFrom('clientas')
    .where('clinic_id', '=', clinicId)
    .where(inIds(db, 'id', ids))
    .returning(['id', 'vip'])
    .execute();
}

/** A deleted clienta's citas go with her. */
export async function deleteCitasOf(db: Kysely<DB>, clinicId: string, clientaIds: string[]) {
  if (clientaIds.length === 0) return [];
  return db
    .deleteFrom('citas')
    .where('clinic_id', '=', clinicId)
    .where(inIds(db, 'clienta_id', clientaIds))
    .returning(['id', 'dia', 'estado'])
    .execute();
}

/** A deleted clienta's calls stay, as calls of an unknown caller (no link, no recorded name). */
export async function unlinkLlamadasOf(db: Kysely<DB>, clinicId: string, clientaIds: string[], updatedAt: number): Promise<string[]> {
  if (clientaIds.length === 0) return [];
  const rows = await db
    .updateTable('llamadas')
    .set({ clienta_id: null, cliente_nombre: null, updated_at: updatedAt })
    .where('clinic_id', '=', clinicId)
    .where(inIds(db, 'clienta_id', clientaIds))
    .returning('id')
    .execute();
  return rows.map((r) => r.id);
}

/**
 * The citas (or calls) of clientas whose name or phone (or name) changed: what the API shows of
 * them changed too, so their updated_at moves. Returns their ids.
 */
export async function touchRecordsOf(
  db: Kysely<DB>,
  table: 'citas' | 'llamadas',
  clinicId: string,
  clientaIds: string[],
  updatedAt: number,
): Promise<string[]> {
  if (clientaIds.length === 0) return [];
  const rows = await db
    .updateTable(table)
    .set({ updated_at: updatedAt })
    .where('clinic_id', '=', clinicId)
    .where(inIds(db, 'clienta_id', clientaIds))
    .returning('id')
    .execute();
  return rows.map((r) => r.id);
}

/** Which of `ids` are clientas of this clinic. */
export async function existingClientaIds(db: Kysely<DB>, clinicId: string, ids: string[]): Promise<Set<string>> {
  const found = new Set<string>();
  for (let i = 0; i < ids.length; i += 5_000) {
    const rows = await db
      .selectFrom('clientas')
      .select('id')
      .where('clinic_id', '=', clinicId)
      .where(inIds(db, 'id', ids.slice(i, i + 5_000)))
      .execute();
    for (const r of rows) found.add(r.id);
  }
  return found;
}

/** Count changes keyed by the count table's key after clinic_id: [dia, estado] etc. */
export type CountDeltas = Map<string, { key: (string | number)[]; n: number }>;

export function addDelta(deltas: CountDeltas, key: (string | number)[], n: number): void {
  const k = key.join('\u0000');
  const d = deltas.get(k);
  if (d) d.n += n;
  else deltas.set(k, { key, n });
}

const COUNT_TABLES = {
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
  await db.deleteFrom('citas_por_dia').where('clinic_id', '=', clinicId).execute();
  await db.deleteFrom('llamadas_por_dia').where('clinic_id', '=', clinicId).execute();
  await db.deleteFrom('clientas_por_vip').where('clinic_id', '=', clinicId).execute();
  await sql`insert into citas_por_dia (clinic_id, dia, estado, n)
    select clinic_id, dia, estado, count(*) from citas where clinic_id = ${clinicId} group by clinic_id, dia, estado`.execute(db);
  await sql`insert into llamadas_por_dia (clinic_id, dia, resultado, n)
    select clinic_id, dia, resultado, count(*) from llamadas where clinic_id = ${clinicId} group by clinic_id, dia, resultado`.execute(db);
  await sql`insert into clientas_por_vip (clinic_id, vip, n)
    select clinic_id, vip, count(*) from clientas where clinic_id = ${clinicId} group by clinic_id, vip`.execute(db);
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
 * Per-transaction set-up of an import: deferred foreign keys (a cita may precede its clienta in
 * the file; PostgreSQL's are declared DEFERRABLE INITIALLY DEFERRED) and the table that parks
 * references not resolved yet. Rolled back with the transaction; dropped by dropParkedRefs().
 */
export async function prepareImportSession(db: Kysely<DB>): Promise<void> {
  if (dialectOf(db) === 'postgres') {
    await sql`create temporary table import_refs (line bigint not null, clienta_id text collate "C" not null, bad_line smallint not null) on commit drop`.execute(
      db,
    );
  } else {
    await sql`pragma defer_foreign_keys = on`.execute(db);
    await sql`create temporary table import_refs (line integer not null, clienta_id text not null, bad_line integer not null)`.execute(db);
  }
}

/** `badLine`: the line already has other problems (so a missing clienta adds a problem, not a bad line). */
export async function parkRefs(db: Kysely<DB>, refs: { line: number; id: string; badLine: boolean }[]): Promise<void> {
  for (let i = 0; i < refs.length; i += 500) {
    const chunk = refs.slice(i, i + 500);
    await sql`insert into import_refs (line, clienta_id, bad_line) values ${sql.join(chunk.map((r) => sql`(${r.line}, ${r.id}, ${r.badLine ? 1 : 0})`))}`.execute(
      db,
    );
  }
}

/**
 * Parked references whose clienta is still not stored: how many, how many of them are on lines
 * with no other problem, and the first `max` by line.
 */
export async function parkedMissing(db: Kysely<DB>, clinicId: string, max: number) {
  const missing = sql`from import_refs r where not exists (select 1 from clientas c where c.clinic_id = ${clinicId} and c.id = r.clienta_id)`;
  const first = await sql<{
    line: number;
    clienta_id: string;
  }>`select r.line, r.clienta_id ${missing} order by r.line limit ${max}`.execute(db);
  const count = await sql<{
    n: number | string;
    good: number | string | null;
  }>`select count(*) as n, sum(1 - r.bad_line) as good ${missing}`.execute(db);
  return {
    count: Number(count.rows[0]?.n ?? 0),
    onGoodLines: Number(count.rows[0]?.good ?? 0),
    first: first.rows.map((r) => ({ line: Number(r.line), clienta_id: r.clienta_id })),
  };
}

export async function dropParkedRefs(db: Kysely<DB>): Promise<void> {
  await sql`drop table if exists import_refs`.execute(db);
}

/**
 * Events that wait for a clienta: a cita or call written before the clienta it names (an import
 * may list her later) cannot be shown as the API shows it yet, so its event is parked here, in
 * file order, and made when the writer finishes. A temporary table of the writing transaction
 * (PostgreSQL drops it at commit; dropPendingEvents drops it on SQLite), made on first use.
 */
export async function parkEvents(db: Kysely<DB>, events: { tipo: string; id: string }[]): Promise<void> {
  if (events.length === 0) return;
  if (dialectOf(db) === 'postgres') {
    await sql`create temporary table if not exists import_pending_events (ord bigserial primary key, tipo text not null, record_id text not null) on commit drop`.execute(
      db,
    );
  } else {
    await sql`create temporary table if not exists import_pending_events (ord integer primary key, tipo text not null, record_id text not null)`.execute(
      db,
    );
  }
  for (let i = 0; i < events.length; i += 500) {
    const chunk = events.slice(i, i + 500);
    await sql`insert into import_pending_events (tipo, record_id) values ${sql.join(chunk.map((e) => sql`(${e.tipo}, ${e.id})`))}`.execute(
      db,
    );
  }
}

/** The parked events after `afterOrd`, in order, at most `n`. */
export async function pendingEvents(
  db: Kysely<DB>,
  afterOrd: number,
  n: number,
): Promise<{ ord: number; tipo: string; record_id: string }[]> {
  const r = await sql<{
    ord: number | string;
    tipo: string;
    record_id: string;
  }>`select ord, tipo, record_id from import_pending_events where ord > ${afterOrd} order by ord limit ${n}`.execute(db);
  return r.rows.map((x) => ({ ...x, ord: Number(x.ord) }));
}

export async function dropPendingEvents(db: Kysely<DB>): Promise<void> {
  await sql`drop table if exists import_pending_events`.execute(db);
}

/** SQLite page cache (KiB) for a bulk write: the hot index pages stay in memory; it bounds the RSS of an import. */
const BULK_CACHE_KIB = 262_144;

/**
 * Runs `fn` with a larger SQLite page cache (a ceiling, not an allocation), restoring the
 * connection's own setting after. Random-order index inserts (UUIDs) are 2x faster once the
 * index pages fit. PostgreSQL: the server's shared_buffers decide; nothing to do here.
 */
export async function withBulkCache<T>(db: Kysely<DB>, fn: () => Promise<T>): Promise<T> {
  if (dialectOf(db) !== 'sqlite') return fn();
  const before = await sql<{ cache_size: number }>`pragma cache_size`.execute(db);
  await sql.raw(`pragma cache_size = -${BULK_CACHE_KIB}`).execute(db);
  try {
    return await fn();
  } finally {
    await sql.raw(`pragma cache_size = ${Number(before.rows[0]?.cache_size ?? -65536)}`).execute(db);
  }
}
