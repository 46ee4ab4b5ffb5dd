// The SQLite statement cache behind Kysely: rows read in raw mode and built in JS must be the
// same objects better-sqlite3 would have built, for every kind of statement Kysely runs.
import { sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { openDatabase, type Database } from '../../src/db/connect.js';

let database: Database | null = null;
afterEach(async () => {
  await database?.close();
  database = null;
});

async function memory() {
  database = await openDatabase({ kind: 'sqlite', file: ':memory:' });
  const { db } = database;
  await sql`create table t (id integer primary key, name text, note text)`.execute(db);
  return db;
}

describe('SQLite statements (raw rows built in JS)', () => {
  it('returns rows as plain objects with every column, nulls and numbers intact', async () => {
    const db = await memory();
    await sql`insert into t (id, name, note) values (1, 'Ana', null), (2, 'Bea', 'x')`.execute(db);
    const r = await sql<{ id: number; name: string; note: string | null }>`select id, name, note from t order by id`.execute(db);
    expect(r.rows).toEqual([
      { id: 1, name: 'Ana', note: null },
      { id: 2, name: 'Bea', note: 'x' },
    ]);
    expect(Object.getPrototypeOf(r.rows[0])).toBe(Object.prototype);
    expect(Object.keys(r.rows[0]!)).toEqual(['id', 'name', 'note']);
  });

  it('keeps the last value of a repeated column name, as better-sqlite3 does', async () => {
    const db = await memory();
    const r = await sql<{ a: number }>`select 1 as a, 2 as a`.execute(db);
    expect(r.rows).toEqual([{ a: 2 }]);
  });

  it('stores a column named __proto__ as data, never as the prototype', async () => {
    const db = await memory();
    const r = await sql<Record<string, unknown>>`select 'x' as "__proto__", 1 as b`.execute(db);
    const row = r.rows[0]!;
    expect(Object.prototype.hasOwnProperty.call(row, '__proto__')).toBe(true);
    expect(row['__proto__']).toBe('x');
    expect(row.b).toBe(1);
  });

  it('runs writes (changes and insert id) and re-uses a statement with new parameters', async () => {
    const db = await memory();
    const ins = await db
      .insertInto('t' as never)
      .values({ id: 7, name: 'Cruz', note: null } as never)
      .executeTakeFirst();
    expect(ins.numInsertedOrUpdatedRows).toBe(1n);
    expect(ins.insertId).toBe(7n);
    for (const id of [7, 8]) {
      const r = await sql<{ name: string }>`select name from t where id = ${id}`.execute(db);
      expect(r.rows).toEqual(id === 7 ? [{ name: 'Cruz' }] : []);
    }
  });

  it('streams rows as objects', async () => {
    const db = await memory();
    await sql`insert into t (id, name) values (1, 'a'), (2, 'b'), (3, 'c')`.execute(db);
    const seen: unknown[] = [];
    for await (const row of db
      .selectFrom('t' as never)
      .select(['id', 'name'] as never)
      .orderBy('id' as never)
      .stream())
      seen.push(row);
    expect(seen).toEqual([
      { id: 1, name: 'a' },
      { id: 2, name: 'b' },
      { id: 3, name: 'c' },
    ]);
  });
});
