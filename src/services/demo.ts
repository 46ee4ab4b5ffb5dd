// Demo clinics: a clinic plus generated data, written through the same RecordWriter as import,
// in one transaction per clinic.
import { sql } from 'kysely';
import type { Database } from '../db/connect.js';
import { demoCounts, generateDemo } from '../demo/generate.js';
import type { Clinic } from '../repos/clinics.js';
import { todayIn } from '../time.js';
import { createClinic } from './accounts.js';
import { lockClinicData, withBulkCache } from '../repos/writes.js';
import { RecordWriter } from './record-writer.js';

const DEMO_NAMES = ['Clínica Demo Aurora', 'Centro Estético Demo Brisa', 'Clínica Demo Camelia', 'Estudio Demo Dalia', 'Clínica Demo Esencia'];

export interface DemoClinicOptions {
  seed: number;
  scale: number;
  nowMs: number;
  name?: string;
  timezone?: string;
  plan?: string;
  /** Called every PROGRESS_EVERY records and at the end, with the records written so far and in all. */
  onProgress?: (written: number, total: number) => void;
}

const PROGRESS_EVERY = 50_000;

export function demoClinicName(index: number): string {
  const base = DEMO_NAMES[index % DEMO_NAMES.length] ?? 'Clínica Demo';
  return index < DEMO_NAMES.length ? base : `${base} ${Math.floor(index / DEMO_NAMES.length) + 1}`;
}

/**
 * Writes a demo data set into `clinic` in one transaction. `fresh`: the clinic has no data yet,
 * so rows are plain INSERTs with no look-up of stored rows (the fast path for large scales), and
 * no events: a fresh clinic's data is a starting state that a follower reads from the lists, not
 * a change (its updated_at is set and its data version bumped all the same). Otherwise the
 * records are upserted like an import's, with events.
 */
export async function seedDemoData(database: Database, clinic: Clinic, opts: DemoClinicOptions & { fresh?: boolean }): Promise<ReturnType<RecordWriter['totals']>> {
  const c = demoCounts(opts.scale);
  const total = c.clientas + c.citas + c.llamadas;
  return database.writeTransaction((trx) => withBulkCache(trx, async () => {
    if (database.dialect === 'sqlite') await sql`pragma defer_foreign_keys = on`.execute(trx);
    // The generator writes every clienta before the rows that refer to it, so PostgreSQL can check
    // references per statement instead of a million at COMMIT, which would outlast the statement
    // timeout of a runtime opened for the API (e.g. a benchmark's data set).
    else await sql`set constraints all immediate`.execute(trx);
    await lockClinicData(trx, clinic.id);
    const writer = new RecordWriter(trx, { clinicId: clinic.id, timezone: clinic.timezone, currency: clinic.currency }, {
      mode: opts.fresh ? 'insert' : 'upsert', now: () => opts.nowMs,
    });
    let n = 0;
    for (const rec of generateDemo({
      seed: opts.seed, scale: opts.scale, timeZone: clinic.timezone,
      today: todayIn(clinic.timezone, opts.nowMs), nowSeconds: Math.floor(opts.nowMs / 1000),
    })) {
      await writer.add(rec);
      if (++n % PROGRESS_EVERY === 0) opts.onProgress?.(n, total);
    }
    await writer.finish();
    if (n % PROGRESS_EVERY !== 0) opts.onProgress?.(n, total);
    return writer.totals();
  }));
}

export async function createDemoClinic(database: Database, index: number, opts: DemoClinicOptions) {
  const clinic = await createClinic(database.db, {
    name: opts.name ?? demoClinicName(index), timezone: opts.timezone ?? 'Europe/Madrid', currency: 'EUR', plan: opts.plan ?? 'premium',
  }, opts.nowMs);
  const counts = await seedDemoData(database, clinic, { ...opts, fresh: true });
  return { clinic, counts };
}
