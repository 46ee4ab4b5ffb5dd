// clinic-api backup and restore (docs/cli.md; docs/operations.md, "Backups and restore"), with
// real processes throughout: a server process serving requests, a `clinic-api import` of 120,000
// records in another process, backups taken meanwhile by `clinic-api backup` processes, restores
// by `clinic-api restore`, and servers started on what was restored. A backup holds the database
// as it was at one instant: before the import's transaction or after it, never in between; a
// restored DATA_DIR serves the same answers to the same API key and opens the webhook secrets.
// The refusals are in backup-refusals.test.ts.
import fs from 'node:fs';
import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrationsFor } from '../../src/db/migrations/index.js';
import { steadyLoad } from '../helpers/load.js';
import { startReceiver, type Receiver } from '../helpers/receiver.js';
import { startServerProcess, type ServerProcess } from '../helpers/server-process.js';
import { until } from '../helpers/wait.js';
import { cliProcess, importFile, stateOf, writerHoldsLock } from './backup-helpers.js';
import { tempDirs } from './in-process.js';

/** New clientas in the import, each with two citas: 120,000 records, several seconds in one transaction. */
const IMPORTED_CLIENTAS = 40_000;

/**
 * Every server's variables (a restored one answers /me with the same rate limit). Usage counts
 * are written once an hour: the lock probe sees the import's transaction, not them.
 */
const SERVER_ENV = { USAGE_FLUSH_INTERVAL_S: '3600', RATE_LIMIT_RPS: '10000', RATE_LIMIT_BURST: '10000' };

const dirs = tempDirs('clinic-backup-');
let dataDir: string;
let server: ServerProcess;
let receiver: Receiver;
let clinicId: string;
let endpoint: { id: string; secret: string };
/** The environment of every command on the server's DATA_DIR. */
let env: Record<string, string>;
let auth: Record<string, string>;

beforeAll(async () => {
  dataDir = dirs.make();
  env = { DATA_DIR: dataDir, LOG_LEVEL: 'silent', WEBHOOK_ALLOW_PRIVATE: 'true' };
  server = await startServerProcess({ env: { ...SERVER_ENV, DATA_DIR: dataDir } });
  auth = { authorization: `Bearer ${server.key}` };
  clinicId = ((await (await fetch(`${server.baseUrl}/api/v1/me`, { headers: auth })).json()) as { clinica: { id: string } }).clinica.id;
  // A webhook endpoint on a clinic of its own (the import's events give the delivery worker nothing to do).
  receiver = await startReceiver();
  const other = await cliProcess(['clinics', 'create', '--name', 'Clínica Copia', '--plan', 'premium'], env);
  expect(other.code, other.stderr).toBe(0);
  const created = await cliProcess(['webhooks', 'create', '--clinic', other.stdout.trim(), '--url', receiver.url], env);
  expect(created.code, created.stderr).toBe(0);
  const [id, secret] = created.stdout.trim().split('\n');
  endpoint = { id: id!, secret: secret! };
}, 120_000);

afterAll(async () => {
  await server?.kill();
  await receiver?.close();
  dirs.cleanup();
});

/** `webhooks test` on `dir`: the ping the receiver got, checked against the secret shown at creation. */
async function pingVerifies(dir: string): Promise<void> {
  const before = receiver.received.length;
  const r = await cliProcess(['webhooks', 'test', endpoint.id], { ...env, DATA_DIR: dir });
  expect(r.code, r.stderr).toBe(0);
  const ping = receiver.received.slice(before).at(-1)!;
  expect(ping.tipo).toBe('ping');
  const headers = Object.fromEntries(Object.entries(ping.headers).map(([k, v]) => [k, String(v)]));
  expect(() => new Webhook(endpoint.secret.replace(/^whsec_/, '')).verify(ping.body, headers)).not.toThrow();
}

describe('clinic-api backup while a server serves and an import runs (SQLite, real processes)', () => {
  it('every backup restores to the state before the import transaction or after it, never between', async () => {
    const db = path.join(dataDir, 'clinic.db');
    const out = dirs.make();
    const file = path.join(out, 'import.jsonl');
    importFile(file, IMPORTED_CLIENTAS);
    const before = stateOf(db, clinicId);
    const load = steadyLoad(`${server.baseUrl}/api/v1/citas?limit=50`, auth, 2, 10_000);

    const imp = cliProcess(['import', '--clinic', clinicId, file], env);
    // Backups from the moment the import's transaction holds the write lock until it has exited.
    await until(async () => imp.exited() || (await writerHoldsLock(db)), 'the import to hold the write lock or to end', 60_000, 20);
    const taken: { file: string; lockedAtStart: boolean; lockedAtEnd: boolean }[] = [];
    while (!imp.exited()) {
      const lockedAtStart = await writerHoldsLock(db);
      const backup = path.join(out, `during-${taken.length}.db`);
      const r = await cliProcess(['backup', backup, '--json'], env);
      expect(r.code, r.stderr).toBe(0);
      taken.push({ file: backup, lockedAtStart, lockedAtEnd: await writerHoldsLock(db) });
    }
    const imported = await imp;
    expect(imported.code, imported.stderr).toBe(0);
    const after = stateOf(db, clinicId);
    expect(after.clientas).toBe(before.clientas + IMPORTED_CLIENTAS);
    expect(after.head).toBeGreaterThan(before.head);
    const last = path.join(out, 'after.db');
    expect((await cliProcess(['backup', last], env)).code).toBe(0);

    // Every request answered 200 meanwhile: the backups hold no lock the server needs, and the
    // server waits for the import's write lock without blocking its requests.
    const outcomes = await load.stop();
    expect(outcomes.length).toBeGreaterThan(0);
    expect(outcomes.filter((o) => o.status !== 200)).toEqual([]);

    for (const t of taken) {
      const state = stateOf(t.file, clinicId);
      expect([before, after], `${path.basename(t.file)}: ${JSON.stringify(state)}`).toContainEqual(state);
      // Taken entirely inside the import's open transaction: its snapshot cannot hold any of it.
      if (t.lockedAtStart && t.lockedAtEnd) expect(state).toEqual(before);
    }
    expect(
      taken.filter((t) => t.lockedAtStart && t.lockedAtEnd),
      'no backup ran inside the import transaction: make the import larger',
    ).not.toEqual([]);
    expect(stateOf(last, clinicId)).toEqual(after);

    // The one taken inside the transaction, restored and served: the state before, the same key,
    // and the webhook secret (sealed with the pepper) still opens.
    const inside = taken.find((t) => t.lockedAtStart && t.lockedAtEnd)!;
    const restoredDir = path.join(dirs.make(), 'data');
    const restored = await cliProcess(['restore', inside.file], { ...env, DATA_DIR: restoredDir });
    expect(restored.code, restored.stderr).toBe(0);
    expect(restored.stdout.trim()).toBe(restoredDir);
    const again = await startServerProcess({ env: { ...SERVER_ENV, DATA_DIR: restoredDir }, key: server.key });
    try {
      const res = await fetch(`${again.baseUrl}/api/v1/clientas?limit=1`, { headers: auth });
      expect(res.status).toBe(200);
      expect(((await res.json()) as { total: number }).total).toBe(before.clientas);
      await pingVerifies(restoredDir);
    } finally {
      await again.kill();
    }
  }, 240_000);

  it('restore drill: backup, restore into a new DATA_DIR, serve: the same answers to the same key', async () => {
    const file = path.join(dirs.make(), 'drill.db');
    // Taken while the server answers requests, every one of them a 200.
    const load = steadyLoad(`${server.baseUrl}/api/v1/clientas?limit=100`, auth, 2, 10_000);
    const backup = await cliProcess(['--json', 'backup', file], env);
    const outcomes = await load.stop();
    expect(backup.code, backup.stderr).toBe(0);
    expect(outcomes.length).toBeGreaterThan(0);
    expect(outcomes.filter((o) => o.status !== 200)).toEqual([]);
    const made = JSON.parse(backup.stdout) as {
      file: string;
      bytes: number;
      schema: string;
      counts: Record<string, number>;
      pepper: string;
    };
    // The schema is this build's latest migration, whichever it is (read from the migration list).
    const latest = Object.keys(migrationsFor('sqlite')).at(-1);
    expect(made).toMatchObject({ file, bytes: fs.statSync(file).size, schema: latest, pepper: 'included' });
    expect(made.counts.clinics).toBe(2);
    expect(fs.statSync(file).mode & 0o077).toBe(0);

    const restoredDir = path.join(dirs.make(), 'restored');
    const restore = await cliProcess(['--json', 'restore', file], { ...env, DATA_DIR: restoredDir });
    expect(restore.code, restore.stderr).toBe(0);
    expect(JSON.parse(restore.stdout)).toMatchObject({
      data_dir: restoredDir,
      schema: latest,
      pending_migrations: [],
      counts: made.counts,
      pepper: 'written',
    });
    // The pepper goes back to its file, and nowhere else: never printed, not left in the database.
    const pepper = fs.readFileSync(path.join(dataDir, 'api-key-pepper'), 'utf8').trim();
    expect(fs.readFileSync(path.join(restoredDir, 'api-key-pepper'), 'utf8').trim()).toBe(pepper);
    for (const text of [backup.stdout, backup.stderr, restore.stdout, restore.stderr]) expect(text).not.toContain(pepper);
    const tables = new BetterSqlite3(path.join(restoredDir, 'clinic.db'), { readonly: true });
    expect(tables.prepare(`select count(*) from sqlite_schema where name = 'clinic_api_backup'`).pluck().get()).toBe(0);
    tables.close();
    expect(fs.readFileSync(path.join(restoredDir, 'clinic.db')).includes(Buffer.from(pepper))).toBe(false);

    const restored = await startServerProcess({ env: { ...SERVER_ENV, DATA_DIR: restoredDir }, key: server.key });
    try {
      for (const p of [
        '/api/v1/me',
        '/api/v1/citas?limit=500',
        '/api/v1/citas?desde=2026-01-01&hasta=2026-12-31&limit=200&offset=100',
        '/api/v1/clientas?limit=500',
        '/api/v1/clientas?q=clienta%201234',
        '/api/v1/llamadas?desde=2020-01-01&limit=500',
        '/api/v1/eventos?limit=500',
        '/api/v1/eventos?cursor=now',
      ]) {
        const [a, b] = await Promise.all([server, restored].map((s) => fetch(s.baseUrl + p, { headers: auth })));
        expect(b!.status, p).toBe(200);
        expect(a!.status, p).toBe(200);
        expect(await b!.text(), p).toBe(await a!.text());
      }
      await pingVerifies(restoredDir);
    } finally {
      await restored.kill();
    }
  }, 180_000);
});
