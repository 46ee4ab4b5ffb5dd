// First start on an empty database: a demo clinic with realistic data, a demo owner and one
// demo API key, announced once (server.ts prints the banner). Later starts find clinics and make
// nothing. Several instances may start at once on one empty database: the check and the demo run
// under the database's start-up lock (Database.exclusive), so exactly one of them makes it.
import type { Database } from '../db/connect.js';
import type { DemoCounts } from '../demo/sizes.js';
import { countClinics } from '../repos/clinics.js';
import type { KeyService } from './api-keys.js';
import { createDemoWithAccess } from './demo.js';

export interface FirstRunResult {
  clinicId: string;
  clinicName: string;
  key: string;
  ownerEmail: string;
  ownerPassword: string;
  counts: DemoCounts;
}

export const DEMO_OWNER_EMAIL = 'owner@demo.clinic';

/** The demo, if this database has no clinic yet; else null. */
export function firstRun(database: Database, keys: KeyService, nowMs: number): Promise<FirstRunResult | null> {
  return database.exclusive(async () => {
    if ((await countClinics(database.db)) > 0) return null;
    // Already under the start-up lock: the demo must not take it again.
    const demo = await createDemoWithAccess(database, keys, { seed: 1, scale: 1, nowMs, ownerEmail: DEMO_OWNER_EMAIL, lock: false });
    return {
      clinicId: demo.clinic.id,
      clinicName: demo.clinic.name,
      key: demo.key,
      ownerEmail: demo.ownerEmail,
      ownerPassword: demo.ownerPassword,
      counts: demo.counts,
    };
  });
}
