// The SQLite statements of a connection (src/db/sqlite-statements.ts): the hot reads' rows, read
// as arrays and built in JS, must be the same objects better-sqlite3 builds for every other query;
// and the statements Kysely runs, prepared once, must run every kind of statement it sends.
import { sql, type Kysely } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { openDatabase, type Database } from '../../src/db/connect.js';
import type { DB } from '../../src/db/schema.js';
import { directOf } from '../../src/db/sqlite-statements.js';

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

/** `text`'s rows both ways: through Kysely (better-sqlite3's objects) and as a hot read (built in JS). */
async function bothWays(db: Kysely<DB>, text: string): Promise<[unknown[], unknown[]]> {
  const viaKysely = (await sql.raw(text).execute(db)).rows;
  return [viaKysely, directOf(db)!.read(text, [])];
}

describe('SQLite statements', () => {
  it('a hot read returns rows as plain objects with every column, nulls and numbers intact, as Kysely does', async () => {
    const db = await memory();
    await sql`insert into t (id, name, note) values (1, 'Ana', null), (2, 'Bea', 'x')`.execute(db);
    const [viaKysely, direct] = await bothWays(db, 'select id, name, note from t order by id');
    expect(direct).toEqual([
      { id: 1, name: 'Ana', note: null },
      { id: 2, name: 'Bea', note: 'x' },
    ]);
    expect(direct).toEqual(viaKysely);
    expect(Object.getPrototypeOf(direct[0])).toBe(Object.prototype);
    expect(Object.keys(direct[0]!)).toEqual(['id', 'name', 'note']);
  });

  it('keeps the last value of a repeated column name, as better-sqlite3 does', async () => {
    const db = await memory();
    const [viaKysely, direct] = await bothWays(db, 'select 1 as a, 2 as a');
    expect(direct).toEqual([{ a: 2 }]);
    expect(direct).toEqual(viaKysely);
  });

  it('stores a column named __proto__ as data, never as the prototype', async () => {
    const db = await memory();
    const [, direct] = await bothWays(db, `select 'x' as "__proto__", 1 as b`);
    const row = direct[0] as Record<string, unknown>;
    expect(Object.prototype.hasOwnProperty.call(row, '__proto__')).toBe(true);
    expect(row['__proto__']).toBe('x');
    expect(row.b).toBe(1);
  });

  it("Kysely and a hot read of the same SQL use statements of their own: neither gets the other's rows", async () => {
    const db = await memory();
    await sql`insert into t (id, name) values (1, 'a')`.execute(db);
    const text = 'select id, name from t';
    for (let i = 0; i < 2; i++) {
      const [viaKysely, direct] = await bothWays(db, text);
      expect(viaKysely).toEqual([{ id: 1, name: 'a' }]);
      expect(direct).toEqual([{ id: 1, name: 'a' }]);
    }
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
