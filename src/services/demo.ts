// Demo clinics: a clinic plus generated data, written through the same write as an import
// (validate, resolve, apply: services/write/session.ts), in one transaction per clinic; and, for
// the first run and `clinic-api demo`, the clinic with a way in (an owner with a generated
// password and an API key).
import type { Database } from '../db/connect.js';
import { generateDemo } from '../demo/generate.js';
import type { Plan } from '../domain/records.js';
import type { Clinic } from '../repos/clinics.js';
import { todayIn } from '../time.js';
import { createClinic, createUser, findUserByEmail, listClinics } from './accounts.js';
import type { KeyService } from './api-keys.js';
import { generatePassword } from './passwords.js';
import { recordTotals } from './write/counts.js';
import { writeClinicData } from './write/session.js';

const DEMO_NAMES = [
  'Clínica Demo Aurora',
  'Centro Estético Demo Brisa',
  'Clínica Demo Camelia',
  'Estudio Demo Dalia',
  'Clínica Demo Esencia',
];

export interface DemoClinicOptions {
  seed: number;
  scale: number;
  nowMs: number;
  name?: string;
  timezone?: string;
  plan?: string;
  /** Called as records are written, with the records written so far and in all. */
  onProgress?: (written: number, total: number) => void;
}

export function demoClinicName(index: number): string {
  const base = DEMO_NAMES[index % DEMO_NAMES.length] ?? 'Clínica Demo';
  return index < DEMO_NAMES.length ? base : `${base} ${Math.floor(index / DEMO_NAMES.length) + 1}`;
}

/** The first demo name (in demoClinicName's order) that no clinic of this database has yet. */
export async function freeDemoClinicName(db: Database['db']): Promise<string> {
  const taken = new Set((await listClinics(db)).map((c) => c.name));
  for (let i = 0; ; i++) if (!taken.has(demoClinicName(i))) return demoClinicName(i);
}

/** The demo owner's e-mail for a clinic name: "Clínica Demo Brisa" -> owner.clinica-demo-brisa@demo.clinic. */
export function demoOwnerEmail(clinicName: string): string {
  const slug = clinicName
    .normalize('NFD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-|-$/g, '');
  return `owner.${slug}@demo.clinic`;
}

/**
 * The demo key's name, in the clinic's language (a demo clinic speaks Spanish): the dashboard
 * shows key names as they were given, in whatever language it is viewed.
 */
const DEMO_KEY_NAME: Readonly<Record<string, string>> = { es: 'Clave de demostración', en: 'Demo key' };

function demoKeyName(language: string): string {
  return DEMO_KEY_NAME[language] ?? DEMO_KEY_NAME.es!;
}

/** premium, or the first plan API_PLANS allows, so that the demo's key can be created. */
export function demoPlan(apiPlans: readonly Plan[]): Plan {
  return apiPlans.includes('premium') ? 'premium' : (apiPlans[0] ?? 'premium');
}

export interface DemoWithAccess {
  clinic: Clinic;
  counts: ReturnType<typeof recordTotals>;
  ownerEmail: string;
  ownerPassword: string;
  keyId: string;
  key: string;
}

export interface DemoAccessOptions {
  seed: number;
  scale: number;
  nowMs: number;
  /** The owner's e-mail (default demoOwnerEmail of the clinic's name). */
  ownerEmail?: string;
  /**
   * Whether to take the database's start-up lock to pick the name and create the clinic and its
   * owner, so that demos made at once never share a name or an e-mail. False for a caller that
   * already holds it (the first run); the lock is not re-entrant.
   */
  lock: boolean;
  onProgress?: (written: number, total: number) => void;
}

/**
 * A demo clinic under the first free demo name, with its data, an owner (generated password) and
 * an API key: what the first run and `clinic-api demo` hand to the person who asked.
 */
export async function createDemoWithAccess(database: Database, keys: KeyService, opts: DemoAccessOptions): Promise<DemoWithAccess> {
  const ownerPassword = generatePassword();
  const claim = async () => {
    const name = await freeDemoClinicName(database.db);
    const clinic = await createClinic(
      database.db,
      { name, timezone: 'Europe/Madrid', currency: 'EUR', plan: demoPlan(keys.apiPlans) },
      opts.nowMs,
    );
    let email = opts.ownerEmail ?? demoOwnerEmail(name);
    // A person may have taken the address by hand: number it rather than fail.
    for (let n = 2; await findUserByEmail(database.db, email); n++) email = email.replace(/(-\d+)?@/, `-${n}@`);
    const owner = await createUser(database.db, { clinicId: clinic.id, email, role: 'owner', password: ownerPassword }, opts.nowMs);
    return { clinic, owner };
  };
  const { clinic, owner } = opts.lock ? await database.exclusive(claim) : await claim();
  const counts = await seedDemoData(database, clinic, {
    seed: opts.seed,
    scale: opts.scale,
    nowMs: opts.nowMs,
    onProgress: opts.onProgress,
  });
  const issued = await keys.create({ clinicId: clinic.id, name: demoKeyName(clinic.language), expiresAt: null, createdBy: owner.id });
  return { clinic, counts, ownerEmail: owner.email, ownerPassword, keyId: issued.id, key: issued.key };
}

/**
 * Writes a demo data set into `clinic`, which has no data yet, in one transaction: rows are plain
 * INSERTs (no look-up of stored rows: the fast path for large scales), and no events: a fresh
 * clinic's data is a starting state that a follower reads from the lists, not a change (its
 * updated_at is set and its data version bumped all the same).
 */
async function seedDemoData(database: Database, clinic: Clinic, opts: DemoClinicOptions): Promise<ReturnType<typeof recordTotals>> {
  const records = generateDemo({
    seed: opts.seed,
    scale: opts.scale,
    timeZone: clinic.timezone,
    today: todayIn(clinic.timezone, opts.nowMs),
    nowSeconds: Math.floor(opts.nowMs / 1000),
  });
  const lines = (function* () {
    let line = 0;
    for (const record of records) yield { line: ++line, record };
  })();
  const out = await writeClinicData(database, { clinicId: clinic.id, timezone: clinic.timezone, currency: clinic.currency }, lines, {
    mode: 'insert',
    now: () => opts.nowMs,
    onApply: opts.onProgress,
  });
  return recordTotals(out.counts);
}

export async function createDemoClinic(database: Database, index: number, opts: DemoClinicOptions) {
  const clinic = await createClinic(
    database.db,
    {
      name: opts.name ?? demoClinicName(index),
      timezone: opts.timezone ?? 'Europe/Madrid',
      currency: 'EUR',
      plan: opts.plan ?? 'premium',
    },
    opts.nowMs,
  );
  const counts = await seedDemoData(database, clinic, opts);
  return { clinic, counts };
}
