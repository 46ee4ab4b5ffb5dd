// First start on an empty database: a demo clinic with realistic data, a demo owner and one
// demo API key, announced once (server.ts prints the banner). Later starts find clinics and make
// nothing. Several instances may start at once on one empty database: the check and the demo run
// under the database's start-up lock (Database.exclusive), so exactly one of them makes it.
import { randomBytes } from 'node:crypto';
import type { Database } from '../db/connect.js';
import { countClinics } from '../repos/clinics.js';
import { createUser } from './accounts.js';
import type { KeyService } from './api-keys.js';
import { createDemoClinic } from './demo.js';

export interface FirstRunResult {
  clinicId: string;
  clinicName: string;
  key: string;
  ownerEmail: string;
  ownerPassword: string;
  counts: { clientas: number; citas: number; llamadas: number };
}

export const DEMO_OWNER_EMAIL = 'owner@demo.clinic';

/** The demo, if this database has no clinic yet; else null. */
export function firstRun(database: Database, keys: KeyService, nowMs: number): Promise<FirstRunResult | null> {
  return database.exclusive(async () => {
    if ((await countClinics(database.db)) > 0) return null;
    const { clinic, counts } = await createDemoClinic(database, 0, { seed: 1, scale: 1, nowMs });
    const ownerPassword = randomBytes(12).toString('base64url');
    const owner = await createUser(database.db, { clinicId: clinic.id, email: DEMO_OWNER_EMAIL, role: 'owner', password: ownerPassword }, nowMs);
    const issued = await keys.create({ clinicId: clinic.id, name: 'Demo key', expiresAt: null, createdBy: owner.id });
    return { clinicId: clinic.id, clinicName: clinic.name, key: issued.key, ownerEmail: owner.email, ownerPassword, counts };
  });
}
