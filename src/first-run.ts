// First start on an empty database: a demo clinic with realistic data, a demo owner and one
// demo API key, announced once. Later starts find clinics and print no key again.
import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import { createUser } from './services/accounts.js';
import { createDemoClinic } from './services/demo.js';
import { countClinics } from './repos/clinics.js';
import type { Runtime } from './runtime.js';

export interface FirstRunResult {
  clinicId: string;
  clinicName: string;
  key: string;
  ownerEmail: string;
  ownerPassword: string;
  counts: { clientas: number; citas: number; llamadas: number };
}

export const DEMO_OWNER_EMAIL = 'owner@demo.clinic';

export async function firstRun(rt: Runtime, nowMs: number): Promise<FirstRunResult | null> {
  if (rt.database.dialect !== 'postgres') return createDemo(rt, nowMs);
  // Several instances may start at once on one empty PostgreSQL: a session advisory lock lets
  // exactly one of them create the demo; the others then find a clinic and skip.
  return rt.database.db.connection().execute(async (conn) => {
    await sql`select pg_advisory_lock(${FIRST_RUN_LOCK})`.execute(conn);
    try {
      return await createDemo(rt, nowMs);
    } finally {
      await sql`select pg_advisory_unlock(${FIRST_RUN_LOCK})`.execute(conn);
    }
  });
}

/** Arbitrary constant naming the first-run lock. */
const FIRST_RUN_LOCK = 720_431_915;

async function createDemo(rt: Runtime, nowMs: number): Promise<FirstRunResult | null> {
  if ((await countClinics(rt.database.db)) > 0) return null;
  const { clinic, counts } = await createDemoClinic(rt.database, 0, { seed: 1, scale: 1, nowMs });
  const ownerPassword = randomBytes(12).toString('base64url');
  const owner = await createUser(rt.database.db, { clinicId: clinic.id, email: DEMO_OWNER_EMAIL, role: 'owner', password: ownerPassword }, nowMs);
  const issued = await rt.keys.create({ clinicId: clinic.id, name: 'Demo key', expiresAt: null, createdBy: owner.id });
  return { clinicId: clinic.id, clinicName: clinic.name, key: issued.key, ownerEmail: owner.email, ownerPassword, counts };
}

export function firstRunBanner(r: FirstRunResult, baseUrl: string): string {
  return [
    '',
    `First run: created the demo clinic "${r.clinicName}" (${r.counts.clientas} clientas, ${r.counts.citas} citas, ${r.counts.llamadas} llamadas).`,
    '',
    'Your demo API key (shown only now; it is stored only as a keyed hash):',
    `  ${r.key}`,
    '',
    'Try it:',
    `  curl -H "Authorization: Bearer ${r.key}" "${baseUrl}/api/v1/citas?limit=5"`,
    '',
    `Dashboard sign-in (Settings > API): ${baseUrl}/dashboard  as ${r.ownerEmail} / ${r.ownerPassword}`,
    `OpenAPI document: ${baseUrl}/api/v1/openapi.json`,
    '',
  ].join('\n');
}
