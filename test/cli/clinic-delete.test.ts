// `clinic-api clinics delete ID --confirm NAME` on each database, with three running server
// processes on it: two sharing a real redis-server (told at once) and one without REDIS_URL (its
// key cache expires). The clinic's keys are refused by all three within 5 s; a wrong name exits 2
// and changes nothing; every table with a clinic_id column is covered (a new one fails this test)
// and holds no row of the clinic afterwards; the other clinic keeps every row and its key works.
import path from 'node:path';
import { sql } from 'kysely';
import { afterAll, describe, expect, it } from 'vitest';
import { openDatabase, type Database } from '../../src/db/connect.js';
import { CLINIC_TABLES } from '../../src/repos/clinic-deletion.js';
import { dialects, newPgDatabaseUrl } from '../helpers/db.js';
import { redisAvailable, startRedis, type RedisServer } from '../helpers/redis.js';
import { TEST_PEPPER } from '../helpers/runtime.js';
import { startServerProcess, type ServerProcess } from '../helpers/server-process.js';
import { until } from '../helpers/wait.js';
import { runCli, tempDirs } from './in-process.js';

const dirs = tempDirs('clinic-delete-');
const servers: ServerProcess[] = [];
let redis: RedisServer | undefined;
afterAll(async () => {
  await Promise.all(servers.map((s) => s.kill()));
  await redis?.close();
  dirs.cleanup();
});

/** Tables of the database with a clinic_id column. */
async function tablesWithClinicId(database: Database): Promise<string[]> {
  const q =
    database.dialect === 'sqlite'
      ? sql<{ name: string }>`select m.name as name from sqlite_master m join pragma_table_info(m.name) p
          where m.type = 'table' and p.name = 'clinic_id' order by 1`
      : sql<{ name: string }>`select table_name as name from information_schema.columns
          where column_name = 'clinic_id' and table_schema = current_schema() order by 1`;
  return (await q.execute(database.db)).rows.map((r) => r.name);
}

/** Rows of the clinic in every table with a clinic_id column, and its clinics row. */
async function rowsOf(database: Database, clinicId: string): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const t of await tablesWithClinicId(database)) {
    const r = await sql<{ n: number }>`select count(*) as n from ${sql.table(t)} where clinic_id = ${clinicId}`.execute(database.db);
    out[t] = Number(r.rows[0]!.n);
  }
  const c = await sql<{ n: number }>`select count(*) as n from clinics where id = ${clinicId}`.execute(database.db);
  out.clinics = Number(c.rows[0]!.n);
  return out;
}

const line = (o: object) => JSON.stringify(o) + '\n';
const records = (k: number) =>
  line({
    type: 'clienta',
    id: `0c00000${k}-0000-4000-8000-000000000001`,
    nombre: 'Ana Ruiz',
    telefono: '+34600000001',
    vip: false,
    cliente_desde: '2025-01-01',
    created_at: '2025-01-01T10:00:00+01:00',
  }) +
  line({
    type: 'cita',
    id: `0c00000${k}-0000-4000-8000-000000000002`,
    clienta_id: `0c00000${k}-0000-4000-8000-000000000001`,
    fecha_hora: '2026-03-30T10:00:00+02:00',
    servicio: 'Manicura',
    duracion_min: 45,
    precio: 25,
    estado: 'confirmada',
    profesional_nombre: 'Elena Ruiz',
    sede_nombre: 'Sede Norte',
    created_at: '2026-03-01T09:00:00+01:00',
  });

/** Asks `server` with `key` until it answers 401, for at most `ms`; whether it did. */
async function refusedWithin(server: ServerProcess, key: string, ms: number): Promise<boolean> {
  return until(async () => (await status(server, key)) === 401, `${server.baseUrl} to refuse the key`, ms, 50).then(
    () => true,
    () => false,
  );
}

/**
 * Makes a request with `key` and waits until the server's request log has written its entry: a
 * server writes its entries in the order they were answered, so every earlier one is written too.
 */
async function loggedThrough(database: Database, server: ServerProcess, key: string): Promise<void> {
  const res = await fetch(`${server.baseUrl}/api/v1/me`, { headers: { authorization: `Bearer ${key}` } });
  await res.arrayBuffer();
  const id = res.headers.get('x-request-id')!;
  await until(
    async () => (await database.db.selectFrom('request_log').select('id').where('request_id', '=', id).execute()).length > 0,
    `log entry ${id}`,
  );
}

const status = async (server: ServerProcess, key: string, p = '/api/v1/me') => {
  const res = await fetch(`${server.baseUrl}${p}`, { headers: { authorization: `Bearer ${key}` } });
  await res.arrayBuffer();
  return res.status;
};

describe.each(dialects())('clinics delete (%s)', (dialect) => {
  it.runIf(redisAvailable('clinics delete across a fleet'))(
    'removes every row of the clinic; its keys are refused by every running instance within 5 s; the other clinic is untouched',
    async () => {
      redis ??= await startRedis();
      const dataDir = dirs.make();
      const env: Record<string, string> = { WEBHOOK_ALLOW_PRIVATE: 'true', API_KEY_PEPPER: TEST_PEPPER };
      let pgUrl: string | null = null;
      if (dialect === 'postgres') env.DATABASE_URL = pgUrl = await newPgDatabaseUrl();
      const cli = (argv: string[], stdin?: string, extra: Record<string, string> = {}) =>
        runCli(argv, { dataDir, env: { ...env, ...extra }, stdin });
      const ok = async (argv: string[], stdin?: string, extra: Record<string, string> = {}) => {
        const r = await cli(argv, stdin, extra);
        expect(r.code, `${argv.join(' ')}: ${r.stderr}`).toBe(0);
        return r.stdout.trim();
      };

      const ids: string[] = [];
      const keys: string[] = [];
      for (const [k, name] of [
        [1, 'Centro Alba'],
        [2, 'Centro Bruma'],
      ] as const) {
        const clinic = await ok(['clinics', 'create', '--name', name, '--plan', 'premium']);
        ids.push(clinic);
        keys.push(await ok(['keys', 'create', '--clinic', clinic, '--name', 'test']));
        await ok(
          ['users', 'create', '--clinic', clinic, '--email', `owner${k}@example.org`, '--role', 'owner', '--password-stdin'],
          'a-long-password-1234\n',
        );
        await ok(['import', '--clinic', clinic, '-'], records(k));
        await ok(['webhooks', 'create', '--clinic', clinic, '--url', 'http://127.0.0.1:9/hook']);
      }
      const [a, b] = ids as [string, string];
      const [keyA, keyB] = keys as [string, string];

      const serverEnv = {
        DATA_DIR: dataDir,
        ...env,
        WEBHOOK_RETRY_BASE_MS: '20',
        WEBHOOK_RETRY_MAX_MS: '100',
        USAGE_FLUSH_INTERVAL_S: '1',
      };
      const fleet = await Promise.all([
        startServerProcess({ env: { ...serverEnv, REDIS_URL: redis.url }, key: keyA }),
        startServerProcess({ env: { ...serverEnv, REDIS_URL: redis.url }, key: keyA }),
        startServerProcess({ env: serverEnv, key: keyA }),
      ]);
      servers.push(...fleet);
      // Every instance has the key cached, and the clinic has usage and error rows.
      for (const s of fleet) {
        expect(await status(s, keyA)).toBe(200);
        expect(await status(s, keyA, '/api/v1/citas?desde=nope')).toBe(400);
      }

      const database = await openDatabase(
        pgUrl === null
          ? { kind: 'sqlite', file: path.join(dataDir, 'clinic.db') }
          : { kind: 'postgres', url: pgUrl, poolMax: 2, statementTimeoutMs: 10_000 },
      );
      try {
        // Every table with a clinic_id is one clinics delete empties.
        expect(await tablesWithClinicId(database)).toEqual(
          [...CLINIC_TABLES].filter((t) => dialect === 'sqlite' || t !== 'clientas_search').sort(),
        );
        // Usage is counted in batches, written a moment later.
        await until(
          async () => (await rowsOf(database, a)).api_key_usage! > 0 && (await rowsOf(database, a)).api_key_errors! > 0,
          'usage rows',
        );
        // The request log too: every entry of the requests above written.
        await Promise.all(fleet.map((s) => loggedThrough(database, s, keyA)));
        const beforeA = await rowsOf(database, a);
        const beforeB = await rowsOf(database, b);
        for (const t of [
          'clientas',
          'citas',
          'events',
          'api_keys',
          'users',
          'webhook_endpoints',
          'api_key_usage',
          'api_key_errors',
          'request_log',
        ])
          expect(beforeA[t], t).toBeGreaterThan(0);

        // A name that is not exactly the clinic's: refused, nothing changed.
        for (const wrong of ['centro alba', 'Centro Alba ', 'Centro Bruma']) {
          const r = await cli(['clinics', 'delete', a, '--confirm', wrong]);
          expect(r.code).toBe(2);
          expect(r.stderr).toContain(`--confirm must be the clinic's name exactly, "Centro Alba"`);
        }
        const unknown = await cli(['clinics', 'delete', '0badc0de-0000-4000-8000-000000000000', '--confirm', 'Centro Alba']);
        expect(unknown.code).toBe(2);
        expect(unknown.stderr).toMatch(/no clinic with id/);
        expect(await rowsOf(database, a)).toEqual(beforeA);
        for (const s of fleet) expect(await status(s, keyA)).toBe(200);
        // Those requests' entries written (and counted) before the deletion.
        await Promise.all(fleet.map((s) => loggedThrough(database, s, keyA)));
        const deletedA = await rowsOf(database, a);

        const r = await cli(['--json', 'clinics', 'delete', a, '--confirm', 'Centro Alba'], undefined, { REDIS_URL: redis.url });
        expect(r.code, r.stderr).toBe(0);
        const out = JSON.parse(r.stdout) as { announced: boolean; rows: Record<string, number> };
        expect(out.announced).toBe(true);
        for (const [t, n] of Object.entries(deletedA)) expect(out.rows[t], t).toBe(n);
        expect(r.stderr).toContain('announced through Redis');

        // Every instance refuses the key within 5 s (the one without Redis when its key cache expires).
        const refused = await Promise.all(fleet.map((s) => refusedWithin(s, keyA, 5_000)));
        expect(refused).toEqual([true, true, true]);
        // The entries of the requests served with the key until then (and collected before the
        // deletion) are not written: every server's log written through a later request of the other clinic.
        await Promise.all(fleet.map((s) => loggedThrough(database, s, keyB)));
        expect(await rowsOf(database, a)).toEqual(Object.fromEntries(Object.keys(beforeA).map((t) => [t, 0])));
        // The other clinic: every row (with the log entries and usage of the requests just made), and its key works everywhere.
        const afterB = await rowsOf(database, b);
        expect(afterB.request_log).toBe(beforeB.request_log! + 3);
        const untouched = (r: Record<string, number>) => ({ ...r, request_log: 0, api_key_usage: 0 });
        expect(untouched(afterB)).toEqual(untouched(beforeB));
        for (const s of fleet) expect(await status(s, keyB, '/api/v1/citas?desde=2026-01-01')).toBe(200);
      } finally {
        await database.close();
      }
    },
    120_000,
  );
});
