// Completeness of the change feed under concurrency (README, "Keep a mirror in sync"): several
// `clinic-api import` processes write to one clinic at once (and one to another clinic) while the
// README's example program, run as it is printed there, takes cursor=now, reads every collection
// and follows the feed over HTTP. When the imports are done and the program has caught up, its
// copy equals what the API answers, record for record, on both databases. No event may become
// visible behind a cursor already passed; if one did, the copy would miss it.
//
// Keys with fewer scopes follow the feed at the same time (README, "Scopes"): each sees exactly
// the events of the collections it may read, every one of them once and in order, and without
// contacto:read their datos carry no contact details: the completeness rule holds per key.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
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

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const PEPPER = 'mirror-test-pepper-0123456789abcdefghijklmnop';
const WRITERS = 3;

/** The README's example program: the ```js block that starts with "// mirror.mjs". */
function exampleProgram(): string {
  const readme = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');
  const block = /```js\n(\/\/ mirror\.mjs[\s\S]*?)```/.exec(readme);
  if (!block) throw new Error('README.md has no ```js block starting with "// mirror.mjs"');
  return block[1]!;
}

// The data: ids by kind (1 clienta, 2 cita, 3 llamada), base records, and one file per writer.
const uuid = (kind: number, a: number, b: number) =>
  `${String(kind).padStart(8, '0')}-${String(a).padStart(4, '0')}-4000-8000-${String(b).padStart(12, '0')}`;
const ESTADOS = ['pendiente', 'confirmada', 'completada', 'cancelada'];
const clienta = (a: number, i: number, nombre = `Clienta ${a}-${i}`) => ({
  type: 'clienta',
  id: uuid(1, a, i),
  nombre,
  telefono: `+346${String(a * 1000 + i).padStart(8, '0')}`,
  vip: i % 3 === 0,
  cliente_desde: '2024-01-01',
  created_at: '2024-01-01T10:00:00+01:00',
});
const cita = (a: number, i: number, j: number, extra: object = {}) => ({
  type: 'cita',
  id: uuid(2, a, i * 100 + j),
  clienta_id: uuid(1, a, i),
  fecha_hora: `2026-04-${String(1 + (j % 28)).padStart(2, '0')}T${String(9 + (i % 8)).padStart(2, '0')}:00:00+02:00`,
  servicio: 'Manicura',
  duracion_min: 45,
  precio: 20,
  estado: 'confirmada',
  profesional_nombre: 'Laura',
  sede_nombre: 'Centro',
  created_at: '2026-03-01T09:00:00+01:00',
  ...extra,
});
const llamada = (a: number, i: number, linked: boolean, extra: object = {}) => ({
  type: 'llamada',
  id: uuid(3, a, i),
  ...(linked ? { clienta_id: uuid(1, a, i) } : { cliente_nombre: `Desconocida ${i}` }),
  fecha_hora: '2026-03-27T18:00:00+01:00',
  telefono_caller: '+34600123456',
  duracion_segundos: 60,
  resultado: 'info',
  idioma: 'es',
  created_at: '2026-03-27T18:01:00+01:00',
  ...extra,
});
const gone = (kind: 'clienta' | 'cita' | 'llamada', id: string) => ({ type: kind, id, deleted: true });

/** 60 clientas with 20 citas and a call each (the even ones linked): 1,320 records, three pages of citas. */
function base(): object[] {
  const out: object[] = [];
  for (let i = 0; i < 60; i++) {
    out.push(clienta(0, i));
    for (let j = 0; j < 20; j++) out.push(cita(0, i, j));
    out.push(llamada(0, i, i % 2 === 0));
  }
  return out;
}

/**
 * Writer k's file. First its own deletions (a clienta with her citas, citas, calls: disjoint between
 * writers), which are applied, and numbered, at once; then new records of its own, some deleted
 * again later in the file; then what every writer changes: the same ten clientas renamed (each
 * rename changes her 20 citas and her call), the same citas and calls. So a writer numbers events
 * and then waits for another's row locks, and the writers' commits interleave with their numbering:
 * a naive "seq > last seen" feed over a global sequence skips events here (it was tried).
 */
function writerFile(k: number): object[] {
  const out: object[] = [];
  for (let i = 20 + 5 * k; i < 25 + 5 * k; i++) out.push(gone('clienta', uuid(1, 0, i)));
  for (let j = 1; j < 6; j++) out.push(gone('cita', uuid(2, 0, (40 + k) * 100 + j)));
  out.push(gone('llamada', uuid(3, 0, 50 + 2 * k)), gone('llamada', uuid(3, 0, 51 + 2 * k)));
  const a = 10 + k;
  for (let i = 0; i < 50; i++) {
    out.push(clienta(a, i));
    for (let j = 0; j < 5; j++) out.push(cita(a, i, j));
    out.push(llamada(a, i, i % 2 === 0));
  }
  out.push(gone('clienta', uuid(1, a, 0)), gone('cita', uuid(2, a, 100)));
  for (let i = 0; i < 10; i++) out.push(clienta(0, i, `Nombre ${k}-${i}`));
  for (let i = 10; i < 20; i++) out.push(cita(0, i, 0, { estado: ESTADOS[k], precio: 10 + k }));
  for (let i = 56; i < 60; i++)
    out.push(llamada(0, i, i % 2 === 0, { resultado: ['agendada', 'cancelada', 'transferida', 'sin_accion'][k] }));
  return out;
}

const jsonl = (rows: object[]) => rows.map((r) => JSON.stringify(r)).join('\n') + '\n';

interface Run {
  code: number | null;
  stderr: string;
}

function startProcess(args: string[], env: NodeJS.ProcessEnv): { proc: ChildProcess; done: Promise<Run> } {
  const proc = spawn(process.execPath, args, { cwd: ROOT, env, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  proc.stderr!.on('data', (c: Buffer) => {
    stderr += c.toString();
  });
  const done = new Promise<Run>((resolve) => proc.on('exit', (code) => resolve({ code, stderr })));
  return { proc, done };
}

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
    if (!page.has_more) await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`the follower did not reach the head: ${seen.length} events seen`);
}

/** Reads `url` until `done` holds, every 25 ms, for at most `ms`. */
async function until<T>(what: string, read: () => Promise<T>, done: (v: T) => boolean, ms = 30_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await read();
    if (done(v)) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(v).slice(0, 300)}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

describe.each(dialects())('a mirror kept by the README program while imports run in parallel, on %s', (dialect) => {
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
        const w = startProcess(['--import', 'tsx', 'test/cli/run-cli.ts', 'import', '--clinic', clinicId, file], childEnv);
        children.push(w.proc);
        return w.done;
      });

      // The follower starts as the first of them commits, so the rest land while it reads and follows.
      await until(
        'the first import',
        () => dataVersions(db.db, clinic.id),
        (v) => v.eventsSeq > baseHead || v.data > 1,
      );
      const program = path.join(dir, 'mirror.mjs');
      fs.writeFileSync(program, exampleProgram());
      const mirrorFile = path.join(dir, 'mirror.json');
      const follower = startProcess([program, mirrorFile], { PATH: process.env.PATH ?? '', API_URL: address, API_KEY: key, POLL_MS: '20' });
      children.push(follower.proc);

      let head: number | null = null;
      const followers = Object.entries(scoped).map(([prefix, k]) =>
        followFeed(address, k, clinic.id, () => head).then((e) => [prefix, e] as const),
      );

      for (const [i, w] of (await Promise.all(writers)).entries()) expect(w.code, `writer ${i}: ${w.stderr}`).toBe(0);
      head = (await dataVersions(db.db, clinic.id)).eventsSeq;
      const readMirror = async () => {
        try {
          return JSON.parse(fs.readFileSync(mirrorFile, 'utf8')) as Record<
            'clientas' | 'citas' | 'llamadas',
            Record<string, Record<string, unknown>>
          > & { cursor: string };
        } catch {
          return null;
        }
      };
      const mirror = (await until('the mirror to catch up', readMirror, (m) => m !== null && decodeCursor(m.cursor, clinic.id) === head))!;
      // Still running (it follows forever) and it said nothing on stderr (no 410, no error).
      expect(follower.proc.exitCode).toBeNull();
      follower.proc.kill('SIGTERM');
      expect((await follower.done).stderr).toBe('');

      // The log itself: gap-free, 1..head.
      const stats = await db.db
        .selectFrom('events')
        .select((eb) => [eb.fn.countAll<number>().as('n'), eb.fn.min('seq').as('lo'), eb.fn.max('seq').as('hi')])
        .where('clinic_id', '=', clinic.id)
        .executeTakeFirstOrThrow();
      expect([Number(stats.n), Number(stats.lo), Number(stats.hi)]).toEqual([head, 1, head]);
      expect(head).toBeGreaterThan(baseHead + WRITERS * 300);

      // What the API answers now, all of it.
      const readAll = async (name: 'clientas' | 'citas' | 'llamadas') => {
        const out: Record<string, Record<string, unknown>> = {};
        for (let offset = 0; ; offset += 500) {
          const res = await fetch(`${address}/api/v1/${name}?updated_since=1970-01-01T00:00:00Z&limit=500&offset=${offset}`, {
            headers: { authorization: `Bearer ${key}` },
          });
          const body = (await res.json()) as Record<string, Record<string, unknown>[]>;
          for (const r of body[name]!) out[r.id as string] = r;
          if (body[name]!.length < 500) return out;
        }
      };
      // A clienta's derived counters (total_citas ...) change without events: compared without them.
      const own = (rows: Record<string, Record<string, unknown>>) =>
        Object.fromEntries(
          Object.entries(rows).map(([id, r]) => {
            const { total_citas: _a, total_llamadas: _b, ultima_cita: _c, ultima_llamada: _d, ...rest } = r;
            return [id, rest];
          }),
        );
      for (const name of ['clientas', 'citas', 'llamadas'] as const) {
        const actual = await readAll(name);
        expect(Object.keys(mirror[name]).length, name).toBe(Object.keys(actual).length);
        expect(name === 'clientas' ? own(mirror[name]) : mirror[name], name).toEqual(name === 'clientas' ? own(actual) : actual);
      }
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
