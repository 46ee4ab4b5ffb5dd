// The request log of one OAuth app: a page of the clinic's log restricted to the app's grants
// (request_log.grant_id), with the same filters, order and keyset as logPage in request-log.ts.
// It was kept apart from that file while the access record's storage was being changed there;
// the grant condition belongs in logPage's LogFilter (and this file goes) when that file is next
// changed.
import type { Kysely } from 'kysely';
import type { DB } from '../db/schema.js';
import type { LogCursor, LogFilter, StoredRequestLogRow } from './request-log.js';

/** A page of the clinic's log made with these grants (one app's), newest first unless `order` says otherwise. */
export async function appLogPage(
  db: Kysely<DB>,
  clinicId: string,
  grantIds: readonly string[],
  f: LogFilter,
  after: LogCursor | null,
  limit: number,
  order: 'desc' | 'asc' = 'desc',
): Promise<StoredRequestLogRow[]> {
  if (grantIds.length === 0) return [];
  let q = db.selectFrom('request_log').selectAll().where('clinic_id', '=', clinicId).where('grant_id', 'in', grantIds);
  if (f.keyId) q = q.where('key_id', '=', f.keyId);
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
  // The row as logPage returns it: without the access set's id (the access record's, not the
  // entry's), and PostgreSQL's int8 and float8 (strings or numbers by driver) as numbers.
  return rows.map(({ access_set: _set, ...r }) => ({
    ...r,
    id: Number(r.id),
    at_ms: Number(r.at_ms),
    status: Number(r.status),
    duration_ms: Number(r.duration_ms),
    records: r.records === null ? null : Number(r.records),
  }));
}
