// What the backup tests share: a CLI command as its own process, an import file, a clinic's state
// read straight from a database file, and whether a writer holds SQLite's write lock. Not a test file.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import { fileURLToPath } from 'node:url';
import BetterSqlite3 from 'better-sqlite3';
import { pause } from '../helpers/wait.js';
import { builtEntry } from '../helpers/built-sources.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

export interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** `clinic-api ...args` as its own process (from the sources: test/cli/run-cli.ts), with only `env` (and PATH). */
export function cliProcess(args: string[], env: Record<string, string>): Promise<Run> & { exited(): boolean } {
  const child = spawn(process.execPath, [...builtEntry('test/cli/run-cli.ts'), ...args], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', TZ: 'UTC', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  let exited = false;
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  const done = new Promise<Run>((resolve) =>
    child.once('close', (code) => {
      exited = true;
      resolve({ code, stdout, stderr });
    }),
  );
  return Object.assign(done, { exited: () => exited });
}

const uuid = (kind: number, n: number) => `${String(kind).padStart(8, '0')}-0000-4000-8000-${String(n).padStart(12, '0')}`;

/** A JSON Lines import of `clientas` new clientas named "Clienta N", each with two citas. */
export function importFile(file: string, clientas: number): void {
  const lines: string[] = [];
  for (let i = 0; i < clientas; i++) {
    lines.push(
      JSON.stringify({
        type: 'clienta',
        id: uuid(1, i),
        nombre: `Clienta ${i}`,
        telefono: `+346${String(i).padStart(8, '0')}`,
        vip: i % 3 === 0,
        cliente_desde: '2024-01-01',
        created_at: '2024-01-01T10:00:00+01:00',
      }),
    );
    for (let j = 0; j < 2; j++)
      lines.push(
        JSON.stringify({
          type: 'cita',
          id: uuid(2, 2 * i + j),
          clienta_id: uuid(1, i),
          fecha_hora: `2026-0${4 + j}-${String(1 + (i % 28)).padStart(2, '0')}T10:00:00+02:00`,
          servicio: 'Manicura',
          duracion_min: 45,
          precio: 20,
          estado: 'confirmada',
          profesional_nombre: 'Laura',
          sede_nombre: 'Centro',
          created_at: '2026-03-01T09:00:00+01:00',
        }),
      );
  }
  fs.writeFileSync(file, lines.join('\n') + '\n');
}

export interface ClinicState {
  clientas: number;
  citas: number;
  llamadas: number;
  events: number;
  /** the clinic's last event seq: the head of its change feed */
  head: number;
}

/** A clinic's records and event log in the database `file` (a live one or a backup), read-only. */
export function stateOf(file: string, clinicId: string): ClinicState {
  const db = new BetterSqlite3(file, { readonly: true, fileMustExist: true });
  try {
    const n = (sql: string) => Number(db.prepare(sql).pluck().get(clinicId));
    return {
      clientas: n('select count(*) from clientas where clinic_id = ?'),
      citas: n('select count(*) from citas where clinic_id = ?'),
      llamadas: n('select count(*) from llamadas where clinic_id = ?'),
      events: n('select count(*) from events where clinic_id = ?'),
      head: n('select coalesce(max(seq), 0) from events where clinic_id = ?'),
    };
  } finally {
    db.close();
  }
}

/**
 * Whether a writer holds the database's write lock, asked three times 40 ms apart (each asks with
 * BEGIN IMMEDIATE that does not wait, and gives the lock back at once): a long transaction, such
 * as an import's, holds it for all three; the server's short writes do not.
 */
export async function writerHoldsLock(file: string): Promise<boolean> {
  const db = new BetterSqlite3(file, { fileMustExist: true, timeout: 0 });
  try {
    for (let i = 0; i < 3; i++) {
      if (i > 0) await pause(40); // the spacing is the test: a short write does not span it
      try {
        db.exec('begin immediate');
        db.exec('rollback');
        return false;
      } catch (err) {
        if ((err as { code?: string }).code !== 'SQLITE_BUSY') throw err;
      }
    }
    return true;
  } finally {
    db.close();
  }
}
