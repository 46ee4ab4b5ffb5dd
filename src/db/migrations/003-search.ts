// Search at scale (`q` on /clientas): a substring index on the normalised name and the phone's
// digits, and name-ordered indexes that also carry telefono_digits, so a filtered walk in name
// order is answered from the index alone. One history, a different index type per dialect:
//  - PostgreSQL: pg_trgm GIN indexes; LIKE '%x%' uses them directly.
//  - SQLite: an FTS5 table with the trigram tokenizer, kept in sync by triggers. Its rowid comes
//    from clientas_search (an INTEGER PRIMARY KEY, so VACUUM never renumbers it, unlike the
//    implicit rowid of clientas) and clientas_search also holds clinic_id, so counting a clinic's
//    matches never reads the wide clientas rows.
// See docs/postgres.md ("Search") for the measurements behind this.
import { sql, type Kysely } from 'kysely';
import type { Dialect } from '../dialect.js';

export async function up(db: Kysely<unknown>, dialect: Dialect): Promise<void> {
  if (dialect === 'postgres') await upPostgres(db);
  else await upSqlite(db);
}

async function upPostgres(db: Kysely<unknown>): Promise<void> {
  // pg_trgm is a trusted extension (PostgreSQL 13+): the database owner may create it.
  await sql`create extension if not exists pg_trgm`.execute(db);
  await sql`create index clientas_name_trgm on clientas using gin (nombre_norm gin_trgm_ops)`.execute(db);
  await sql`create index clientas_phone_trgm on clientas using gin (telefono_digits gin_trgm_ops)`.execute(db);
  await sql`create index clientas_by_name_cover on clientas (clinic_id, nombre_norm, id) include (telefono_digits)`.execute(db);
  await sql`create index clientas_by_vip_name_cover on clientas (clinic_id, vip, nombre_norm, id) include (telefono_digits)`.execute(db);
  await sql`drop index clientas_by_name`.execute(db);
  await sql`drop index clientas_by_vip_name`.execute(db);
}

// SQLite runs migrations outside a transaction (Kysely: no transactional DDL there), so this one
// makes its own, and every statement tolerates a re-run after a crash.
async function upSqlite(db: Kysely<unknown>): Promise<void> {
  await db.transaction().execute(async (trx) => {
    const run = (q: ReturnType<typeof sql>) => q.execute(trx);
    await run(sql`create index if not exists clientas_by_name_cover on clientas (clinic_id, nombre_norm, id, telefono_digits)`);
    await run(sql`create index if not exists clientas_by_vip_name_cover on clientas (clinic_id, vip, nombre_norm, id, telefono_digits)`);
    await run(sql`drop index if exists clientas_by_name`);
    await run(sql`drop index if exists clientas_by_vip_name`);

    await run(sql`create table if not exists clientas_search (
      rid integer primary key, clinic_id text not null, id text not null, unique (clinic_id, id))`);
    // Contentless (the text lives in clientas); contentless_delete (SQLite 3.43+) lets the
    // triggers delete by rowid; detail=full keeps positions, so a quoted phrase of trigrams is
    // an exact substring match.
    await run(sql`create virtual table if not exists clientas_fts using fts5(
      nombre_norm, telefono_digits, content='', contentless_delete=1, tokenize='trigram')`);

    // An upsert that takes the DO UPDATE path fires the UPDATE triggers, not the INSERT ones.
    await run(sql`create trigger if not exists clientas_search_insert after insert on clientas begin
      insert into clientas_search (clinic_id, id) values (new.clinic_id, new.id);
      insert into clientas_fts (rowid, nombre_norm, telefono_digits) values (last_insert_rowid(), new.nombre_norm, new.telefono_digits);
    end`);
    // Re-importing an unchanged row must not rewrite its index entries.
    await run(sql`create trigger if not exists clientas_search_update after update of nombre_norm, telefono_digits on clientas
      when old.nombre_norm is not new.nombre_norm or old.telefono_digits is not new.telefono_digits begin
      delete from clientas_fts where rowid = (select rid from clientas_search where clinic_id = old.clinic_id and id = old.id);
      insert into clientas_fts (rowid, nombre_norm, telefono_digits)
        select rid, new.nombre_norm, new.telefono_digits from clientas_search where clinic_id = new.clinic_id and id = new.id;
    end`);
    await run(sql`create trigger if not exists clientas_search_delete after delete on clientas begin
      delete from clientas_fts where rowid = (select rid from clientas_search where clinic_id = old.clinic_id and id = old.id);
      delete from clientas_search where clinic_id = old.clinic_id and id = old.id;
    end`);

    // Rows stored before this migration.
    await run(sql`insert into clientas_search (clinic_id, id)
      select clinic_id, id from clientas c
      where not exists (select 1 from clientas_search s where s.clinic_id = c.clinic_id and s.id = c.id)`);
    await run(sql`insert into clientas_fts (clientas_fts) values ('delete-all')`);
    await run(sql`insert into clientas_fts (rowid, nombre_norm, telefono_digits)
      select s.rid, c.nombre_norm, c.telefono_digits from clientas_search s join clientas c on c.clinic_id = s.clinic_id and c.id = s.id`);
  });
}
