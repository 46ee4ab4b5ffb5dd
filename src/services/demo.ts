// Demo clinics: a clinic plus generated data, written through the same RecordWriter as import,
// in one transaction per clinic.
import { sql } from 'kysely';
import type { Database } from '../db/connect.js';
import { generateDemo } from '../demo/generate.js';
import type { Clinic } from '../repos/clinics.js';
import { todayIn } from '../time.js';
import { createClinic } from './accounts.js';
import { RecordWriter } from './record-writer.js';

const DEMO_NAMES = ['Clínica Demo Aurora', 'Centro Estético Demo Brisa', 'Clínica Demo Camelia', 'Estudio Demo Dalia', 'Clínica Demo Esencia'];

export interface DemoClinicOptions {
  seed: number;
  scale: number;
  nowMs: number;
  name?: string;
  timezone?: string;
  plan?: string;
  onProgress?: (written: number) => void;
}

export function demoClinicName(index: number): string {
  const base = DEMO_NAMES[index % DEMO_NAMES.length] ?? 'Clínica Demo';
  return index < DEMO_NAMES.length ? base : `${base} ${Math.floor(index / DEMO_NAMES.length) + 1}`;
}

export async function seedDemoData(database: Database, clinic: Clinic, opts: DemoClinicOptions): Promise<RecordWriter['counts']> {
  return database.db.transaction().execute(async (trx) => {
    if (database.dialect === 'sqlite') await sql`pragma defer_foreign_keys = on`.execute(trx);
    const writer = new RecordWriter(trx, clinic.id, clinic.timezone);
    let n = 0;
    for (const rec of generateDemo({
      seed: opts.seed, scale: opts.scale, timeZone: clinic.timezone,
      today: todayIn(clinic.timezone, opts.nowMs), nowSeconds: Math.floor(opts.nowMs / 1000),
    })) {
      await writer.add(rec);
      if (++n % 50_000 === 0) opts.onProgress?.(n);
    }
    await writer.finish();
    opts.onProgress?.(n);
    return writer.counts;
  });
}

export async function createDemoClinic(database: Database, index: number, opts: DemoClinicOptions) {
  const clinic = await createClinic(database.db, {
    name: opts.name ?? demoClinicName(index), timezone: opts.timezone ?? 'Europe/Madrid', currency: 'EUR', plan: opts.plan ?? 'premium',
  }, opts.nowMs);
  const counts = await seedDemoData(database, clinic, opts);
  return { clinic, counts };
}
