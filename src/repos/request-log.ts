// The request log and the client access record (migrations 010 and 012): the batch writer's
// inserts, the retention's deletes, and the readers of the dashboard and the CLI. Every reader
// takes the clinic id; the access sets carry none and are only ever read joined to their clinic's
// log rows.
import { sql, type Kysely } from 'kysely';
import { dialectOf } from '../db/dialect.js';
import type { DB, RequestLogTable } from '../db/schema.js';
import { clientaBytes, clientaUuid, type AccessSet } from '../domain/access-set.js';
import { insertRows, type Column } from './writes.js';

/** A log row as written (the database numbers it; access_set: see domain/access-set.ts). */
export type RequestLogRow = Omit<RequestLogTable, 'id'>;

/** A log row as read back (its access set is read through accessOfEntry). */
export type StoredRequestLogRow = Omit<RequestLogTable, 'id' | 'access_set'> & { id: number };

const COLUMNS = [
  ['clinic_id', 'text'],
  ['at_ms', 'int8'],
  ['request_id', 'text'],
  ['key_id', 'text'],
  ['grant_id', 'text'],
  ['method', 'text'],
  ['path', 'text'],
  ['query', 'text'],
  ['status', 'int4'],
  ['error_code', 'text'],
  ['duration_ms', 'float8'],
  ['records', 'int4'],
  ['client_ip', 'text'],
  ['user_agent', 'text'],
  ['error_body', 'text'],
  ['access_set', 'bytea'],
] as const satisfies readonly (readonly [keyof RequestLogRow, string])[];

const READ_COLUMNS = ['id', ...COLUMNS.map(([c]) => c).filter((c) => c !== 'access_set')] as (keyof StoredRequestLogRow)[];

/**
 * Writes a batch of log rows, and the access sets they name that may not be stored yet (a set
 * already stored is left as it is), inside the caller's write transaction. The database numbers
 * the rows (SQLite: after the largest id, as an INTEGER PRIMARY KEY does; PostgreSQL: the
 * identity's sequence): ids grow with the time of writing.
 */
export async function insertRequestLog(trx: Kysely<DB>, rows: readonly RequestLogRow[], sets: readonly AccessSet[]): Promise<void> {
  if (rows.length === 0) return;
  await insertAccessSets(trx, sets);
  await insertRows(trx, 'request_log', COLUMNS, rows);
}

const SET_COLUMNS: readonly Column[] = [
  ['set_id', 'bytea'],
  ['clienta', 'bytea'],
];

/** The sets' members, each once (a response lists a clienta with two citas on its page twice); a set already stored is left as it is. */
async function insertAccessSets(trx: Kysely<DB>, sets: readonly AccessSet[]): Promise<void> {
  const rows: { set_id: Buffer; clienta: Buffer }[] = [];
  for (const s of sets) {
    for (const c of new Set(s.clientas)) {
      const b = clientaBytes(c);
      if (b !== null) rows.push({ set_id: s.id, clienta: b });
    }
  }
  await insertRows(trx, 'request_access_sets', SET_COLUMNS, rows, 'ignore');
}

/**
 * Which of `clinicIds` still exist, inside the batch writer's transaction: entries of a clinic
 * deleted meanwhile (its keys still served for up to a second) are not written. On PostgreSQL the
 * clinics' rows are locked (FOR KEY SHARE) until the transaction ends, and a deletion locks the row
 * it deletes first (deleteClinicRows), so the two never interleave: either the deletion waits and
 * then removes what this write added, or this write waits and sees the clinic gone. SQLite's
 * single writer serialises them already.
 */
export async function liveClinics(trx: Kysely<DB>, clinicIds: readonly string[]): Promise<Set<string>> {
  if (clinicIds.length === 0) return new Set();
  const q = trx
    .selectFrom('clinics')
    .select('id')
    .where('id', 'in', [...clinicIds]);
  const rows = await (dialectOf(trx) === 'postgres' ? q.forKeyShare() : q).execute();
  return new Set(rows.map((r) => r.id));
}

/**
 * Retention of deleted clinics' rows: the smallest clinic id in the log after `after` (null: the
 * first), one seek of the index (clinic_id, at_ms, id) each, so walking the log's clinics costs a
 * seek per clinic, not a scan of the log.
 */
export async function loggedClinicAfter(db: Kysely<DB>, after: string | null): Promise<string | null> {
  let q = db.selectFrom('request_log').select((eb) => eb.fn.min('clinic_id').as('c'));
  if (after !== null) q = q.where('clinic_id', '>', after);
  const r = await q.executeTakeFirst();
  return r?.c ?? null;
}

/** Up to `limit` ids of the clinic's log rows (retention of a deleted clinic's rows). */
export async function logIdsOfClinic(db: Kysely<DB>, clinicId: string, limit: number): Promise<number[]> {
  const rows = await db.selectFrom('request_log').select('id').where('clinic_id', '=', clinicId).limit(limit).execute();
  return rows.map((r) => Number(r.id));
}

/**
 * Retention: the next `limit` log rows after `afterId` in primary-key order (the id grows with the
 * time of writing, so the oldest come first), with their time: a range read of the key.
 */
export async function logRowsAfter(db: Kysely<DB>, afterId: number, limit: number): Promise<{ id: number; atMs: number }[]> {
  const rows = await db.selectFrom('request_log').select(['id', 'at_ms']).where('id', '>', afterId).orderBy('id').limit(limit).execute();
  return rows.map((r) => ({ id: Number(r.id), atMs: Number(r.at_ms) }));
}

/**
 * Deletes log rows `ids` and then the access sets they named that no remaining row names (the
 * caller's short write transaction); returns the log rows and the set rows removed.
 */
export async function deleteLogRows(trx: Kysely<DB>, ids: readonly number[]): Promise<{ log: number; access: number }> {
  if (ids.length === 0) return { log: 0, access: 0 };
  const pg = dialectOf(trx) === 'postgres';
  const idList = pg ? sql`id = any(${[...ids]}::int8[])` : sql`id in (${sql.join([...ids])})`;
  const named = await sql<{
    s: Uint8Array;
  }>`select distinct access_set as s from request_log where ${idList} and access_set is not null`.execute(trx);
  const log = await sql`delete from request_log where ${idList}`.execute(trx);
  const access = await deleteUnnamedSets(
    trx,
    named.rows.map((r) => r.s),
  );
  return { log: Number(log.numAffectedRows ?? 0), access };
}

/** Removes those of `setIds` no log row names any more; the set rows removed. */
export async function deleteUnnamedSets(trx: Kysely<DB>, setIds: readonly Uint8Array[]): Promise<number> {
  if (setIds.length === 0) return 0;
  const pg = dialectOf(trx) === 'postgres';
  const r = await sql`delete from request_access_sets
    where ${pg ? sql`set_id = any(${[...setIds]}::bytea[])` : sql`set_id in (${sql.join([...setIds])})`}
    and not exists (select 1 from request_log l where l.access_set = request_access_sets.set_id)`.execute(trx);
  return Number(r.numAffectedRows ?? 0);
}

/** Filters of a clinic's log (every one optional but the clinic). */
export interface LogFilter {
  keyId?: string | null;
  /** an OAuth app's grants (services/app-log.ts); an empty list matches nothing */
  grantIds?: readonly string[] | null;
  /** a status class (4 for 4xx) or one status */
  status?: { class: number } | { exact: number } | null;
  /** the path, exactly as logged (e.g. /api/v1/citas), or a prefix ending in '*' */
  path?: string | null;
  sinceMs?: number | null;
  /** one request id (X-Request-Id, request_id): usually one entry, more when a client reused its own id */
  requestId?: string | null;
  /** exclusive */
  untilMs?: number | null;
}

/** Where a page of the log newest first starts after: the last row of the page before. */
export interface LogCursor {
  atMs: number;
  id: number;
}

function numeric(r: StoredRequestLogRow): StoredRequestLogRow {
  return {
    ...r,
    id: Number(r.id),
    at_ms: Number(r.at_ms),
    status: Number(r.status),
    duration_ms: Number(r.duration_ms),
    records: r.records === null ? null : Number(r.records),
  };
}

/** A page of the clinic's log, newest first (keyset on (at_ms, id): constant cost at any depth). */
export async function logPage(
  db: Kysely<DB>,
  clinicId: string,
  f: LogFilter,
  after: LogCursor | null,
  limit: number,
  order: 'desc' | 'asc' = 'desc',
): Promise<StoredRequestLogRow[]> {
  if (f.grantIds && f.grantIds.length === 0) return [];
  let q = db.selectFrom('request_log').select(READ_COLUMNS).where('clinic_id', '=', clinicId);
  if (f.keyId) q = q.where('key_id', '=', f.keyId);
  if (f.requestId) q = q.where('request_id', '=', f.requestId);
  if (f.grantIds) q = q.where('grant_id', 'in', [...f.grantIds]);
  if (f.status && 'class' in f.status) q = q.where('status', '>=', f.status.class * 100).where('status', '<', f.status.class * 100 + 100);
  else if (f.status) q = q.where('status', '=', f.status.exact);
  if (f.path)
    q = f.path.endsWith('*') ? q.where('path', 'like', `${f.path.slice(0, -1).replace(/[\\%_]/g, '\\$&')}%`) : q.where('path', '=', f.path);
  if (f.sinceMs != null) q = q.where('at_ms', '>=', f.sinceMs);
  if (f.untilMs != null) q = q.where('at_ms', '<', f.untilMs);
  if (after !== null) {
    const op = order === 'desc' ? '<' : '>';
    q = q.where((eb) => eb.or([eb('at_ms', op, after.atMs), eb.and([eb('at_ms', '=', after.atMs), eb('id', op, after.id)])]));
  }
  const rows = await q.orderBy('at_ms', order).orderBy('id', order).limit(limit).execute();
  return rows.map(numeric);
}

/** The clientas a logged request disclosed (its clinic's only). */
export async function accessOfEntry(db: Kysely<DB>, clinicId: string, id: number): Promise<string[]> {
  const rows = await db
    .selectFrom('request_log as l')
    .innerJoin('request_access_sets as a', 'a.set_id', 'l.access_set')
    .select('a.clienta')
    .where('l.clinic_id', '=', clinicId)
    .where('l.id', '=', id)
    .execute();
  return rows.map((r) => clientaUuid(r.clienta));
}

/** A request that disclosed a clienta's data. */
export type AccessRow = Pick<
  StoredRequestLogRow,
  'id' | 'at_ms' | 'request_id' | 'key_id' | 'grant_id' | 'method' | 'path' | 'query' | 'status'
>;

/**
 * Every logged request of the clinic that disclosed the clienta, newest first, `limit` after
 * `afterId` (keyset on the log id): her sets through (clienta, set_id), their rows through
 * (access_set, id). A page sorts the rows of her sets (one set per distinct page a day).
 */
export async function accessPage(
  db: Kysely<DB>,
  clinicId: string,
  clientaId: string,
  afterId: number | null,
  limit: number,
): Promise<AccessRow[]> {
  const blob = clientaBytes(clientaId);
  if (blob === null) return [];
  let q = db
    .selectFrom('request_access_sets as a')
    .innerJoin('request_log as l', 'l.access_set', 'a.set_id')
    .select(['l.id', 'l.at_ms', 'l.request_id', 'l.key_id', 'l.grant_id', 'l.method', 'l.path', 'l.query', 'l.status'])
    .where('a.clienta', '=', blob)
    .where('l.clinic_id', '=', clinicId);
  if (afterId !== null) q = q.where('l.id', '<', afterId);
  const rows = await q.orderBy('l.id', 'desc').limit(limit).execute();
  return rows.map((r) => ({ ...r, id: Number(r.id), at_ms: Number(r.at_ms), status: Number(r.status) }));
}
