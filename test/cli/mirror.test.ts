// Completeness of the change feed under concurrency (docs/api.md, "Keep a mirror in sync"): several
// `clinic-api import` processes write to one clinic at once (and one to another clinic) while the
// docs/api.md's example program, run as it is printed there, takes cursor=now, reads every collection
// and follows the feed over HTTP. When the imports are done and the program has caught up, its
// copy equals what the API answers, record for record, on both databases. No event may become
// visible behind a cursor already passed; if one did, the copy would miss it.
// (mirror-restart.test.ts runs the same program across a restart of the server.)
//
// Keys with fewer scopes follow the feed at the same time (docs/api.md, "Scopes"): each sees exactly
// the events of the collections it may read, every one of them once and in order, and without
// contacto:read their datos carry no contact details: the completeness rule holds per key.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import type { ChildProcess } from 'node:child_process';
import type { FastifyInstance } from 'fastify';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import type { Scope } from '../../src/domain/scopes.js';
import { dataVersions } from '../../src/repos/clinics.js';
import { openRuntime, type Runtime } from '../../src/runtime.js';
import { createClinic } from '../../src/services/accounts.js';
import { decodeCursor } from '../../src/services/feed.js';
import { importJsonLines } from '../../src/services/import.js';
import { dialects, newPgDatabaseUrl } from '../helpers/db.js';
import { pause, untilRead } from '../helpers/wait.js';
import {
  base,
  besidesRetries,
  clienta,
  expectSameAsApi,
  jsonl,
  PEPPER,
  readMirror,
  startProcess,
  uuid,
  writeProgram,
  writerFile,
  WRITERS,
} from './mirror-program.js';
import { builtEntry } from '../helpers/built-sources.js';

const children: ChildProcess[] = [];
const dirs: string[] = [];
afterEach(() => {
  for (const c of children.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
});
afterAll(() => {
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});

async function scopedKey(rt: Runtime, clinicId: string, scopes: Scope[]): Promise<string> {
  return (await rt.keys.create({ clinicId, name: scopes.join(' '), expiresAt: null, createdBy: null, scopes })).key;
}

interface FeedEvent {
  id: string;
  tipo: string;
  datos: Record<string, unknown>;
}

/**
 * Follows the feed with `key` from its oldest event until `head()` is known and reached, as a
 * follower polls (every 20 ms while there is nothing new); every event it was given, in order.
 */
async function followFeed(address: string, key: string, clinicId: string, head: () => number | null): Promise<FeedEvent[]> {
  const seen: FeedEvent[] = [];
  let cursor: string | null = null;
  for (const deadline = Date.now() + 90_000; Date.now() < deadline;) {
    const res = await fetch(`${address}/api/v1/eventos?limit=300${cursor === null ? '' : `&cursor=${cursor}`}`, {
      headers: { authorization: `Bearer ${key}` },
    });
    if (res.status !== 200) throw new Error(`the feed answered ${res.status}: ${await res.text()}`);
    const page = (await res.json()) as { eventos: FeedEvent[]; next_cursor: string; has_more: boolean };
    seen.push(...page.eventos);
    cursor = page.next_cursor;
    const end = head();
    if (!page.has_more && end !== null && decodeCursor(cursor, clinicId) === end) return seen;
    if (!page.has_more) await pause(20); // a follower's pace at the head of the feed
  }
  throw new Error(`the follower did not reach the head: ${seen.length} events seen`);
}

describe.each(dialects())('a mirror kept by the docs/api.md program while imports run in parallel, on %s', (dialect) => {
  it("ends equal to the clinic's data, every record, deletions included; keys with fewer scopes get exactly their events", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'clinic-mirror-'));
    dirs.push(dir);
    const env: Record<string, string> = {
      DATA_DIR: dir,
      LOG_LEVEL: 'silent',
      API_KEY_PEPPER: PEPPER,
      RATE_LIMIT_RPS: '100000',
      RATE_LIMIT_BURST: '100000',
    };
    if (dialect === 'postgres') env.DATABASE_URL = await newPgDatabaseUrl();
    const config = loadConfig(env);
    let rt: Runtime | null = null;
    let app: FastifyInstance | null = null;
    try {
      rt = await openRuntime(config, { logTo: false });
      const db = rt.database;
      const clinic = await createClinic(db.db, { name: 'Espejo', timezone: 'Europe/Madrid', currency: 'EUR', plan: 'premium' });
      const other = await createClinic(db.db, { name: 'Otra', timezone: 'Europe/Madrid', currency: 'EUR', plan: 'premium' });
      const key = (await rt.keys.create({ clinicId: clinic.id, name: 'mirror', expiresAt: null, createdBy: null })).key;
      // Narrower keys, each following the feed in this process while the imports run.
      const scoped = {
        'cita.': await scopedKey(rt, clinic.id, ['eventos:read', 'citas:read']),
        'clienta.': await scopedKey(rt, clinic.id, ['eventos:read', 'clientas:read', 'contacto:read']),
        'llamada.': await scopedKey(rt, clinic.id, ['eventos:read', 'llamadas:read']),
      };
      expect((await importJsonLines(db, clinic.id, Readable.from([jsonl(base())]))).ok).toBe(true);
      const baseHead = (await dataVersions(db.db, clinic.id)).eventsSeq;

      app = await buildApp(rt);
      const address = await app.listen({ port: 0, host: '127.0.0.1' });

      // The writers: real CLI processes, all at once (and one into the other clinic).
      const files = Array.from({ length: WRITERS }, (_, k) => {
        const f = path.join(dir, `writer-${k}.jsonl`);
        fs.writeFileSync(f, jsonl(writerFile(k)));
        return { clinicId: clinic.id, file: f };
      });
      const otherFile = path.join(dir, 'other.jsonl');
      fs.writeFileSync(otherFile, jsonl(Array.from({ length: 300 }, (_, i) => clienta(90, i))));
      const childEnv = { PATH: process.env.PATH ?? '', ...env };
      const writers = [...files, { clinicId: other.id, file: otherFile }].map(({ clinicId, file }) => {
        const w = startProcess([...builtEntry('test/cli/run-cli.ts'), 'import', '--clinic', clinicId, file], childEnv);
        children.push(w.proc);
        return w.done;
      });

      // The follower starts as the first of them commits, so the rest land while it reads and follows.
      await untilRead(
        'the first import',
        () => dataVersions(db.db, clinic.id),
        (v) => v.eventsSeq > baseHead || v.data > 1,
      );
      const program = writeProgram(dir);
      const mirrorFile = path.join(dir, 'mirror.json');
      const follower = startProcess([program, mirrorFile], {
        PATH: process.env.PATH ?? '',
        CLINIC_API_URL: address,
        CLINIC_API_KEY: key,
        POLL_MS: '20',
      });
      children.push(follower.proc);

      let head: number | null = null;
      const followers = Object.entries(scoped).map(([prefix, k]) =>
        followFeed(address, k, clinic.id, () => head).then((e) => [prefix, e] as const),
      );

      for (const [i, w] of (await Promise.all(writers)).entries()) expect(w.code, `writer ${i}: ${w.stderr}`).toBe(0);
      head = (await dataVersions(db.db, clinic.id)).eventsSeq;
      const mirror = (await untilRead(
        'the mirror to catch up',
        () => readMirror(mirrorFile),
        (m) => m !== null && decodeCursor(m.cursor, clinic.id) === head,
      ))!;
      // Still running (it follows forever) and it said nothing on stderr (no 410, no error) but retries, if any.
      expect(follower.proc.exitCode).toBeNull();
      follower.proc.kill('SIGTERM');
      expect(besidesRetries((await follower.done).stderr)).toBe('');

      // The log itself: gap-free, 1..head.
      const stats = await db.db
        .selectFrom('events')
        .select((eb) => [eb.fn.countAll<number>().as('n'), eb.fn.min('seq').as('lo'), eb.fn.max('seq').as('hi')])
        .where('clinic_id', '=', clinic.id)
        .executeTakeFirstOrThrow();
      expect([Number(stats.n), Number(stats.lo), Number(stats.hi)]).toEqual([head, 1, head]);
      expect(head).toBeGreaterThan(baseHead + WRITERS * 300);

      // What the API answers now, all of it.
      await expectSameAsApi(mirror, address, key);
      // Each narrower key saw exactly its collections' events, each once, in the log's order, and
      // contact details only with contacto:read.
      const log = await db.db.selectFrom('events').select(['id', 'tipo']).where('clinic_id', '=', clinic.id).orderBy('seq').execute();
      for (const [prefix, seen] of await Promise.all(followers)) {
        const expected = log.filter((e) => e.tipo.startsWith(prefix));
        expect(expected.length, prefix).toBeGreaterThan(WRITERS * 50);
        expect(
          seen.map((e) => e.id),
          prefix,
        ).toEqual(expected.map((e) => e.id));
        const contact = seen.flatMap((e) =>
          ['telefono', 'email', 'telefono_caller', 'notas'].map((f) => e.datos[f]).filter((v) => v != null),
        );
        if (prefix === 'clienta.') expect(contact.length).toBeGreaterThan(0);
        else expect(contact, prefix).toEqual([]);
      }
      // Every writer's deletions are gone from the copy; the other clinic's records never came.
      for (let k = 0; k < WRITERS; k++) expect(mirror.clientas[uuid(1, 0, 20 + 5 * k)], `writer ${k}'s deletion`).toBeUndefined();
      expect(Object.keys(mirror.clientas).some((id) => id.startsWith('00000001-0090'))).toBe(false);
    } finally {
      await app?.close();
      await rt?.close();
    }
  }, 120_000);
});
