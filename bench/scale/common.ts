// Shared by the scale measurements (bench/scale/*.ts: not part of `npm test`; run with tsx, see
// docs/postgres.md).
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openDatabase, type Database } from '../../src/db/connect.js';
import type { Dialect } from '../../src/db/dialect.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import type { ImportRecord } from '../../src/domain/records.js';
import { formatTimestamp } from '../../src/time.js';
import { createDatabase } from '../../tools/postgres-database.js';
import { startEmbeddedPostgres, type PgServer } from '../../tools/postgres-server.js';

export const NOW_MS = Date.UTC(2026, 2, 28, 12, 0, 0);

/** PostgreSQL for a measurement: `given` (--pg-url: a server whose user may CREATE DATABASE) or an embedded one. */
export async function pgAdmin(given: string | undefined): Promise<{ url: string; server: PgServer | null }> {
  if (given) return { url: given, server: null };
  const server = await startEmbeddedPostgres();
  return { url: server.url, server };
}

/** A fresh migrated database: a new SQLite file under a temp dir, or a new PostgreSQL database. */
export async function scratchDatabase(
  dialect: Dialect,
  pgAdminUrl: string | null,
  tag: string,
): Promise<{ database: Database; where: string }> {
  let database: Database;
  let where: string;
  if (dialect === 'sqlite') {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), `clinic-scale-${tag}-`));
    where = path.join(dir, 'clinic.db');
    database = await openDatabase({ kind: 'sqlite', file: where });
  } else {
    if (!pgAdminUrl) throw new Error('no PostgreSQL');
    where = await createDatabase(pgAdminUrl, `scale_${tag}_${randomBytes(3).toString('hex')}`);
    database = await openDatabase({ kind: 'postgres', url: where, poolMax: 4, statementTimeoutMs: 600_000 });
  }
  await migrateToLatest(database);
  return { database, where };
}

/** An ImportRecord as a line of the import format (docs/import.md). */
export function toJsonLine(r: ImportRecord, zone: string): string {
  const ts = (s: number) => formatTimestamp(s, zone);
  if (r.type === 'clienta') return JSON.stringify({ ...r, created_at: ts(r.created_at) });
  if (r.type === 'cita') {
    const { precio_cents, ...rest } = r;
    return JSON.stringify({ ...rest, precio: precio_cents / 100, fecha_hora: ts(r.fecha_hora), created_at: ts(r.created_at) });
  }
  return JSON.stringify({ ...r, fecha_hora: ts(r.fecha_hora), created_at: ts(r.created_at) });
}

export function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}
