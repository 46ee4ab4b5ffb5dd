// Deleting a clinic entirely: `clinic-api clinics delete ID --confirm NAME`. Every row of the
// clinic in every table (repos/clinic-deletion.ts), in one transaction under the clinic's lock
// (SQLite's write lock waited for asynchronously, like an import's). Then its keys are refused
// everywhere: evicted from this process's key cache and announced on the key-change channel
// (services/key-changes.ts) to every instance with REDIS_URL; without Redis (or while it is down)
// other processes stop accepting them when their key cache entry expires (4 s, api-keys.ts).
import type { Database } from '../db/connect.js';
import { clinicKeyIds, deleteClinicRows, type ClinicTable } from '../repos/clinic-deletion.js';
import { getClinic, sandboxOf } from '../repos/clinics.js';
import { lockClinicData } from '../repos/writes.js';
import { DomainError } from '../errors.js';
import type { KeyService } from './api-keys.js';
import { sandboxRefusal } from './sandbox.js';

export interface ClinicDeletion {
  name: string;
  /** rows deleted per table */
  rows: Record<ClinicTable, number>;
  /** the clinic's API keys, now refused */
  keys: number;
  /** whether every running instance was told at once (REDIS_URL); else within the key cache's TTL */
  announced: boolean;
}

export async function deleteClinic(database: Database, keys: KeyService, clinicId: string, confirm: string): Promise<ClinicDeletion> {
  const clinic = await getClinic(database.db, clinicId);
  if (!clinic)
    throw new DomainError('not_found', `no clinic with id ${clinicId} (clinic-api clinics list shows the ids); nothing was changed`, {
      field: 'clinic',
    });
  if (clinic.sandbox_of !== null) throw sandboxRefusal(clinic, 'it goes with its clinic');
  if (confirm !== clinic.name)
    throw new DomainError(
      'invalid_input',
      `--confirm must be the clinic's name exactly, ${JSON.stringify(clinic.name)}, got ${JSON.stringify(confirm)}; nothing was changed`,
      { field: '--confirm' },
    );
  const { rows, keyIds } = await database.writeTransaction(async (trx) => {
    // Its sandbox (test mode) first: a clinic row of its own that names this one.
    const sandboxId = await sandboxOf(trx, clinicId);
    if (sandboxId !== null) {
      await lockClinicData(trx, sandboxId);
      await deleteClinicRows(trx, sandboxId, database.dialect === 'sqlite');
    }
    await lockClinicData(trx, clinicId);
    const keyIds = await clinicKeyIds(trx, clinicId);
    return { keyIds, rows: await deleteClinicRows(trx, clinicId, database.dialect === 'sqlite') };
  });
  const announced = await keys.forgetEverywhere(keyIds);
  return { name: clinic.name, rows, keys: keyIds.length, announced };
}
