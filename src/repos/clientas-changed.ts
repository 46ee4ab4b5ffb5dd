// updated_since on /clientas: the clinic's clients changed at or after a time, in (updated_at, id)
// order, from the (clinic_id, updated_at, id) index (named on SQLite, whose planner would walk a
// name index and sort), with the vip and search filters applied to its rows. A tool that polls
// for changes asks for a recent time, so the range is short; the search planner of a `q`
// (clientas-search/) is for name order and is not used here.
import type { Kysely, SelectQueryBuilder } from 'kysely';
import { indexedBy } from '../db/indexed-by.js';
import type { ClientasTable, DB } from '../db/schema.js';
import { withDerived, type ClientaRow, type ClientasFilter } from './clientas.js';
import { searchCondition } from './clientas-search.js';

// `{}`: Kysely's type of a query with nothing selected yet.
// eslint-disable-next-line @typescript-eslint/no-empty-object-type
type From = SelectQueryBuilder<DB & { c: ClientasTable }, 'c', {}>;

function changed(db: Kysely<DB>, clinicId: string, f: ClientasFilter, since: number): From {
  let q = db.selectFrom(indexedBy<ClientasTable, 'c'>(db, 'clientas', 'c', 'clientas_by_updated')) as unknown as From;
  q = q.where('c.clinic_id', '=', clinicId).where('c.updated_at', '>=', since);
  if (f.vip !== null) q = q.where('c.vip', '=', f.vip ? 1 : 0);
  if (f.nameLike !== null || f.digitsLike !== null) q = q.where(searchCondition(f, 'c'));
  return q;
}

/** A page of the clients changed at or after `since`, ordered by (updated_at, id), with their derived fields. */
export async function listChangedClientas(
  db: Kysely<DB>,
  clinicId: string,
  f: ClientasFilter,
  since: number,
  limit: number,
  offset: number,
  nowSeconds: number,
): Promise<ClientaRow[]> {
  const ids = await changed(db, clinicId, f, since)
    .select('c.id')
    .orderBy('c.updated_at')
    .orderBy('c.id')
    .limit(limit)
    .offset(offset)
    .execute();
  if (ids.length === 0) return [];
  // The page's rows by primary key, put back in order (as a search's page is).
  const rows = (await withDerived(db, clinicId, nowSeconds)
    .where(
      'c.id',
      'in',
      ids.map((r) => r.id),
    )
    .execute()) as ClientaRow[];
  const at = new Map(ids.map((r, i) => [r.id, i]));
  return rows.sort((a, b) => at.get(a.id)! - at.get(b.id)!);
}

export async function countChangedClientas(db: Kysely<DB>, clinicId: string, f: ClientasFilter, since: number): Promise<number> {
  const row = await changed(db, clinicId, f, since)
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}
