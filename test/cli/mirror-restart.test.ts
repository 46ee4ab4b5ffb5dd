// The mirror program of docs/api.md across a restart of the server (docs/api.md, "Keep a mirror in sync"):
// `clinic-api serve` as a real process stops while the program follows the feed, the clinic
// changes while it is down (an import), and a new process starts on the same data and port. The
// program, on the SDK, meets refused connections, waits with back-off (saying so on stderr),
// and, once the server is back, catches up: its copy equals what the API answers, on both
// databases. (Before the SDK the program died at the first refused connection.)
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import type { ChildProcess } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { dataVersions } from '../../src/repos/clinics.js';
import { openRuntime, type Runtime } from '../../src/runtime.js';
import { createClinic } from '../../src/services/accounts.js';
import { decodeCursor } from '../../src/services/feed.js';
import { importJsonLines } from '../../src/services/import.js';
import { dialects, newPgDatabaseUrl } from '../helpers/db.js';
import { startServerProcess, type ServerProcess } from '../helpers/server-process.js';
import { untilRead } from '../helpers/wait.js';
import {
  base,
  besidesRetries,
  expectSameAsApi,
  jsonl,
  PEPPER,
  readMirror,
  startProcess,
  writeProgram,
  writerFile,
} from './mirror-program.js';

const children: ChildProcess[] = [];
const servers: ServerProcess[] = [];
const dirs: string[] = [];
afterEach(async () => {
  for (const c of children.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  for (const s of servers.splice(0)) await s.kill();
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

describe.each(dialects())('the mirror program of docs/api.md across a restart of the server, on %s', (dialect) => {
  it('waits while the server is down, then catches up with what changed meanwhile', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'clinic-mirror-restart-'));
    dirs.push(dir);
    const env: Record<string, string> = { API_KEY_PEPPER: PEPPER, RATE_LIMIT_RPS: '100000', RATE_LIMIT_BURST: '100000' };
    if (dialect === 'postgres') env.DATABASE_URL = await newPgDatabaseUrl();
    // The clinic and its key, made on the database the servers will use (DATA_DIR holds SQLite's file).
    let rt: Runtime | null = await openRuntime(loadConfig({ ...env, DATA_DIR: dir, LOG_LEVEL: 'silent' }), { logTo: false });
    try {
      const clinic = await createClinic(rt.database.db, { name: 'Espejo', timezone: 'Europe/Madrid', currency: 'EUR', plan: 'premium' });
      const key = (await rt.keys.create({ clinicId: clinic.id, name: 'mirror', expiresAt: null, createdBy: null })).key;
      expect((await importJsonLines(rt.database, clinic.id, Readable.from([jsonl(base())]))).ok).toBe(true);
      const head = async () => (await dataVersions(rt!.database.db, clinic.id)).eventsSeq;

      const first = await startServerProcess({ key, env: { ...env, DATA_DIR: dir } });
      servers.push(first);
      const mirrorFile = path.join(dir, 'mirror.json');
      const follower = startProcess([writeProgram(dir), mirrorFile], {
        PATH: process.env.PATH ?? '',
        CLINIC_API_URL: first.baseUrl,
        CLINIC_API_KEY: key,
        POLL_MS: '20',
      });
      children.push(follower.proc);
      const before = await head();
      await untilRead(
        'the first copy',
        () => readMirror(mirrorFile),
        (m) => m !== null && decodeCursor(m.cursor, clinic.id) === before,
      );

      // The server stops; the clinic changes while it is down.
      first.signal('SIGTERM');
      expect((await first.exited).code).toBe(0);
      expect((await importJsonLines(rt.database, clinic.id, Readable.from([jsonl(writerFile(0))]))).ok).toBe(true);
      const after = await head();
      expect(after).toBeGreaterThan(before + 300);
      await untilRead(
        'the program to meet the stopped server',
        async () => follower.stderr(),
        (s) => /^mirror: \/api\/v1\/eventos: connection_error \(attempt 2\), again in [\d.]+ s$/m.test(s),
      );

      // A new server process on the same data and port.
      const second = await startServerProcess({ key, env: { ...env, DATA_DIR: dir, PORT: String(first.port) } });
      servers.push(second);
      const mirror = (await untilRead(
        'the copy to catch up',
        () => readMirror(mirrorFile),
        (m) => m !== null && decodeCursor(m.cursor, clinic.id) === after,
      ))!;
      expect(follower.proc.exitCode).toBeNull();
      // ...and says so once it has: the last line is not a retry's "again in ..."
      const caughtUp = await untilRead(
        'the program to say it caught up',
        async () => follower.stderr(),
        (s) => /^mirror: caught up \((\d+) changes applied since the service answered again\); following$/m.test(s),
      );
      expect(Number(/caught up \((\d+) changes/.exec(caughtUp)![1])).toBeGreaterThanOrEqual(after - before);
      await expectSameAsApi(mirror, second.baseUrl, key);
      follower.proc.kill('SIGTERM');
      const { stderr } = await follower.done;
      expect(stderr).toMatch(/connection_error/);
      // nothing but retries on stderr: no error, no expired cursor
      expect(besidesRetries(stderr)).toBe('');
    } finally {
      await rt?.close();
      rt = null;
    }
  }, 120_000);
});
