// compiledOnce: a hot-path query built once per database, re-run with new values. Each run must
// answer exactly what building the query afresh would, on both databases.
import { sql, type Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compiledOnce } from '../../src/db/compiled-once.js';
import type { Database } from '../../src/db/connect.js';
import { capturing } from '../../src/db/explain.js';
import type { DB } from '../../src/db/schema.js';
import { createClinic } from '../../src/services/accounts.js';
import { dialects, freshDatabase } from '../helpers/db.js';
import { pause } from '../helpers/wait.js';

type V = { name: string; limit: number };

describe.each(dialects())('compiledOnce on %s', (dialect) => {
  let database: Database;
  let built = 0;
  const byName = compiledOnce(['name', 'limit'] as const, (db: Kysely<DB>, p: V) => {
    built++;
    // 'Europe/Madrid' is a constant the builder places itself: it must stay in every run.
    return db
      .selectFrom('clinics')
      .select(['name', sql<number>`${7}`.as('seven')])
      .where('timezone', '=', 'Europe/Madrid')
      .where('name', '>=', p.name)
      .orderBy('name')
      .limit(p.limit);
  });

  beforeAll(async () => {
    database = await freshDatabase(dialect);
    for (const [name, timezone] of [
      ['Ana', 'Europe/Madrid'],
      ['Bea', 'Europe/Madrid'],
      ['Cruz', 'America/Mexico_City'],
      ['Dora', 'Europe/Madrid'],
    ]) {
      await createClinic(database.db, { name: name!, timezone: timezone!, currency: 'EUR', plan: 'premium' }, Date.UTC(2026, 0, 1));
    }
  });
  afterAll(async () => {
    await database?.close();
  });

  it('builds once, then runs with each call’s values and the builder’s own constants', async () => {
    const names = async (v: V) => (await byName(database.db, v)).map((r) => [r.name, Number(r.seven)]);
    built = 0;
    expect(await names({ name: 'A', limit: 10 })).toEqual([
      ['Ana', 7],
      ['Bea', 7],
      ['Dora', 7],
    ]);
    expect(await names({ name: 'B', limit: 1 })).toEqual([['Bea', 7]]);
    expect(await names({ name: 'C', limit: 5 })).toEqual([['Dora', 7]]);
    expect(await names({ name: 'Z', limit: 5 })).toEqual([]);
    expect(built).toBe(1);
  });

  it('builds on every run for a handle with plugins, so they see the query (plan capture)', async () => {
    const cap = capturing(database.db);
    built = 0;
    expect((await byName(cap.db, { name: 'B', limit: 2 })).map((r) => r.name)).toEqual(['Bea', 'Dora']);
    expect((await byName(cap.db, { name: 'D', limit: 2 })).map((r) => r.name)).toEqual(['Dora']);
    expect(built).toBe(2);
    expect(cap.queries).toHaveLength(2);
    expect(cap.queries[1]!.parameters).toContain('D');
  });

  it('on SQLite places each value as +? (planned once: better-sqlite3 clears the bindings after each run), elsewhere as a plain parameter', async () => {
    const cap = capturing(database.db);
    expect((await byName(cap.db, { name: 'C', limit: 5 })).map((r) => r.name)).toEqual(['Dora']);
    const text = cap.queries[0]!.sql;
    if (dialect === 'sqlite') {
      expect(text).toMatch(/"name" >= \+\? order by "name" limit \+\?$/);
      // The builder's own constants ('Europe/Madrid', 7) stay plain parameters.
      expect(text.match(/(?<!\+)\?/g)).toHaveLength(2);
    } else {
      expect(text).toMatch(/"name" >= \$\d+ order by "name" limit \$\d+$/);
      expect(text).not.toContain('+');
    }
  });

  it('never reads inside a transaction this process has open: it waits for it, then sees what it committed', async () => {
    let release!: () => void;
    const held = new Promise<void>((r) => {
      release = r;
    });
    let inside!: () => void;
    const began = new Promise<void>((r) => {
      inside = r;
    });
    const writing = database
      .writeTransaction(async (trx) => {
        await trx.updateTable('clinics').set({ name: 'Abril' }).where('name', '=', 'Ana').execute();
        inside();
        await held;
        // Rolled back: nobody outside may ever have seen 'Abril'.
        throw new Error('rollback');
      })
      .catch((err: Error) => err.message);
    await began;
    const reading = byName(database.db, { name: 'A', limit: 1 }).then((rows) => rows.map((r) => r.name));
    // On SQLite the read queues behind the transaction's connection lock; on PostgreSQL it runs at
    // once on another connection and sees the last committed state. Either way: no 'Abril'.
    // A time, not a condition: what is tested is that the read never sees 'Abril', and a read
    // that waits shows no sign of it. 20 ms lets a read that would see it run.
    await pause(20);
    release();
    expect(await writing).toBe('rollback');
    expect(await reading).toEqual(['Ana']);
  });
});
