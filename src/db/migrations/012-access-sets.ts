// The client access record, stored by set (issue 23's cost bound; the layout and why:
// docs/architecture.md, "The request log and the access record"). Migration 010 wrote one access
// row per disclosed clienta and request: a polling integration re-reading a 100-row page wrote a
// hundred rows into two B-trees per request. Now:
//  - request_access_sets: each distinct set of disclosed clientas once per clinic and UTC day,
//    (set_id, clienta) with the clienta's UUID as 16 bytes, set_id a digest of what the set holds
//    (domain/access-set.ts); indexed by (clienta, set_id) for "every request that disclosed her".
//    No clinic id: a set is only ever read joined to its clinic's log rows.
//  - request_log.access_set: the set the response disclosed (null: nobody), indexed with the id
//    for the join and for retention (a set goes when no log row names it any more).
// The rows of 010's request_access are converted (grouped by log row) and that table dropped.
import { sql, type Kysely } from 'kysely';
import { accessSet, clientaBytes, clientaUuid } from '../../domain/access-set.js';
import type { Dialect } from '../dialect.js';

/** Log rows converted per round: bounded memory on a large log. */
const CONVERT_BATCH = 2_000;

export async function up(db: Kysely<unknown>, dialect: Dialect): Promise<void> {
  const pg = dialect === 'postgres';
  const run = async (trx: Kysely<unknown>) => {
    await sql`create table request_access_sets (
      set_id ${pg ? sql`bytea` : sql`blob`} not null,
      clienta ${pg ? sql`bytea` : sql`blob`} not null,
      primary key (set_id, clienta)
    )${pg ? sql`` : sql` without rowid`}`.execute(trx);
    await sql`create index request_access_sets_by_clienta on request_access_sets (clienta, set_id)`.execute(trx);
    await sql`alter table request_log add column access_set ${pg ? sql`bytea` : sql`blob`}`.execute(trx);
    await sql`create index request_log_by_access_set on request_log (access_set, id) where access_set is not null`.execute(trx);

    for (let after = 0; ;) {
      const logs = await sql<{ id: number | string; clinic_id: string; at_ms: number | string }>`
        select id, clinic_id, at_ms from request_log
        where id > ${after} and exists (select 1 from request_access a where a.log_id = request_log.id)
        order by id limit ${CONVERT_BATCH}`.execute(trx);
      if (logs.rows.length === 0) break;
      const first = Number(logs.rows[0]!.id);
      after = Number(logs.rows[logs.rows.length - 1]!.id);
      const access = await sql<{ log_id: number | string; clienta: Uint8Array }>`
        select log_id, clienta from request_access where log_id >= ${first} and log_id <= ${after} order by log_id, clienta`.execute(trx);
      const byLog = new Map<number, string[]>();
      for (const a of access.rows) {
        const uuid = clientaUuid(a.clienta);
        const list = byLog.get(Number(a.log_id));
        if (list) list.push(uuid);
        else byLog.set(Number(a.log_id), [uuid]);
      }
      for (const l of logs.rows) {
        const set = accessSet(l.clinic_id, Number(l.at_ms), byLog.get(Number(l.id)) ?? [], null);
        if (set === null) continue;
        for (const c of set.clientas) {
          await sql`insert into request_access_sets (set_id, clienta) values (${set.id}, ${clientaBytes(c)!})
            on conflict do nothing`.execute(trx);
        }
        await sql`update request_log set access_set = ${set.id} where id = ${Number(l.id)}`.execute(trx);
      }
    }
    await sql`drop table request_access`.execute(trx);
  };
  // SQLite runs migrations outside a transaction (see 003-search): this one makes its own.
  if (pg) await run(db);
  else await db.transaction().execute(run);
}
