// The mirror program of docs/api.md ("Keep a mirror in sync") and what its tests share: the
// program as printed there, written beside a node_modules that resolves @clinic-api/sdk to this
// checkout's package; the data the imports write; the copy read back and compared with what the
// API answers. Not a test file itself.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'vitest';

export const ROOT = fileURLToPath(new URL('../..', import.meta.url));
export const PEPPER = 'mirror-test-pepper-0123456789abcdefghijklmnop';
export const WRITERS = 3;

/** The example program of docs/api.md: the ```js block that starts with "// mirror.mjs". */
export function exampleProgram(): string {
  const page = fs.readFileSync(path.join(ROOT, 'docs/api.md'), 'utf8');
  const block = /```js\n(\/\/ mirror\.mjs[\s\S]*?)```/.exec(page);
  if (!block) throw new Error('docs/api.md has no ```js block starting with "// mirror.mjs"');
  return block[1]!;
}

/** Writes the program into `dir` as mirror.mjs, where `import '@clinic-api/sdk'` finds this checkout's (built) SDK. */
export function writeProgram(dir: string): string {
  fs.symlinkSync(path.join(ROOT, 'node_modules'), path.join(dir, 'node_modules'));
  const program = path.join(dir, 'mirror.mjs');
  fs.writeFileSync(program, exampleProgram());
  return program;
}

// The data: ids by kind (1 clienta, 2 cita, 3 llamada), base records, and one file per writer.
export const uuid = (kind: number, a: number, b: number) =>
  `${String(kind).padStart(8, '0')}-${String(a).padStart(4, '0')}-4000-8000-${String(b).padStart(12, '0')}`;
export const ESTADOS = ['pendiente', 'confirmada', 'completada', 'cancelada'];
export const clienta = (a: number, i: number, nombre = `Clienta ${a}-${i}`) => ({
  type: 'clienta',
  id: uuid(1, a, i),
  nombre,
  telefono: `+346${String(a * 1000 + i).padStart(8, '0')}`,
  vip: i % 3 === 0,
  cliente_desde: '2024-01-01',
  created_at: '2024-01-01T10:00:00+01:00',
});
export const cita = (a: number, i: number, j: number, extra: object = {}) => ({
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
export const llamada = (a: number, i: number, linked: boolean, extra: object = {}) => ({
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
export const gone = (kind: 'clienta' | 'cita' | 'llamada', id: string) => ({ type: kind, id, deleted: true });

/** 60 clientas with 20 citas and a call each (the even ones linked): 1,320 records, three pages of citas. */
export function base(): object[] {
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
export function writerFile(k: number): object[] {
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

export const jsonl = (rows: object[]) => rows.map((r) => JSON.stringify(r)).join('\n') + '\n';

export interface Started {
  proc: ChildProcess;
  /** what it wrote to stderr so far */
  stderr(): string;
  done: Promise<{ code: number | null; stderr: string }>;
}

export function startProcess(args: string[], env: NodeJS.ProcessEnv): Started {
  const proc = spawn(process.execPath, args, { cwd: ROOT, env, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  proc.stderr!.on('data', (c: Buffer) => {
    stderr += c.toString();
  });
  const done = new Promise<{ code: number | null; stderr: string }>((resolve) => proc.on('exit', (code) => resolve({ code, stderr })));
  return { proc, stderr: () => stderr, done };
}

export type Mirror = Record<'clientas' | 'citas' | 'llamadas', Record<string, Record<string, unknown>>> & { cursor: string };

/** The program's file, or null while it has not written one. */
export async function readMirror(file: string): Promise<Mirror | null> {
  try {
    return JSON.parse(fs.readFileSync(file, 'utf8')) as Mirror;
  } catch {
    return null;
  }
}

/** Every record the API answers now, by id. */
async function readAll(address: string, key: string, name: 'clientas' | 'citas' | 'llamadas') {
  const out: Record<string, Record<string, unknown>> = {};
  for (let offset = 0; ; offset += 500) {
    const res = await fetch(`${address}/api/v1/${name}?updated_since=1970-01-01T00:00:00Z&limit=500&offset=${offset}`, {
      headers: { authorization: `Bearer ${key}` },
    });
    const body = (await res.json()) as Record<string, Record<string, unknown>[]>;
    for (const r of body[name]!) out[r.id as string] = r;
    if (body[name]!.length < 500) return out;
  }
}

/** A clienta's derived counters (total_citas ...) change without events: compared without them. */
const own = (rows: Record<string, Record<string, unknown>>) =>
  Object.fromEntries(
    Object.entries(rows).map(([id, r]) => {
      const { total_citas: _a, total_llamadas: _b, ultima_cita: _c, ultima_llamada: _d, ...rest } = r;
      return [id, rest];
    }),
  );

/** The copy equals what the API answers, record for record. */
export async function expectSameAsApi(mirror: Mirror, address: string, key: string): Promise<void> {
  for (const name of ['clientas', 'citas', 'llamadas'] as const) {
    const actual = await readAll(address, key, name);
    expect(Object.keys(mirror[name]).length, name).toBe(Object.keys(actual).length);
    expect(name === 'clientas' ? own(mirror[name]) : mirror[name], name).toEqual(name === 'clientas' ? own(actual) : actual);
  }
}

/** stderr of the program, but for its lines about retries (a busy database may answer 500 or 503 now and then). */
export const besidesRetries = (stderr: string) =>
  stderr
    .split('\n')
    .filter(
      (l) =>
        l !== '' &&
        !/^mirror: \/api\/v1\/\w+: \w+ \(attempt \d+\), again in [\d.]+ s$/.test(l) &&
        !/^mirror: caught up \(\d+ changes applied since the service answered again\); following$/.test(l),
    )
    .join('\n');
