// The first run's start-up lock, on both databases: instances that run firstRun at the same
// instant on one empty database (each with its own connections, as separate processes would
// have) make exactly one demo. Without the lock each would count no clinic and make its own.
// test/cli/first-run.test.ts starts real processes at once, migrations included.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { afterAll, describe, expect, it } from 'vitest';
import type { DatabaseTarget } from '../../src/db/connect.js';
import { firstRun } from '../../src/services/first-run.js';
import { dialects, newPgDatabaseUrl } from '../helpers/db.js';
import { testRuntime, type TestRuntime } from '../helpers/runtime.js';

const NOW = Date.UTC(2026, 2, 28, 12, 0, 0);
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});

describe.each(dialects())('first run on %s', (dialect) => {
  it('several instances at the same instant on one empty database make exactly one demo', async () => {
    let target: DatabaseTarget;
    if (dialect === 'sqlite') {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'clinic-first-run-lock-'));
      dirs.push(dir);
      target = { kind: 'sqlite', file: path.join(dir, 'clinic.db') };
    } else {
      target = { kind: 'postgres', url: await newPgDatabaseUrl(), poolMax: 2, statementTimeoutMs: 30_000 };
    }
    const instances: TestRuntime[] = [];
    try {
      for (let i = 0; i < 3; i++) instances.push(await testRuntime(dialect, { target, nowMs: NOW, migrate: i === 0 }));
      // Every instance connected already: none is held back by its connection's set-up.
      for (const rt of instances) await sql`select 1`.execute(rt.database.db);
      const results = await Promise.all(instances.map((rt) => firstRun(rt.database, rt.keys, NOW)));
      expect(results.filter((r) => r !== null)).toHaveLength(1);
      const db = instances[0]!.database.db;
      const count = async (table: 'clinics' | 'users' | 'api_keys' | 'clientas') =>
        Number(
          (
            await db
              .selectFrom(table)
              .select((eb) => eb.fn.countAll<number>().as('n'))
              .executeTakeFirstOrThrow()
          ).n,
        );
      expect([await count('clinics'), await count('users'), await count('api_keys'), await count('clientas')]).toEqual([1, 1, 1, 200]);
      // A later start finds the clinic and makes nothing.
      expect(await firstRun(instances[1]!.database, instances[1]!.keys, NOW)).toBeNull();
    } finally {
      for (const rt of instances) await rt.close();
    }
  });
});
