// A clinic deleted while a process still holds its usage counts (written in batches, every
// USAGE_FLUSH_INTERVAL_S): the next flush drops them and writes the other clinics' counts, instead
// of failing on the deleted key (the foreign key) and keeping every clinic's counts from being written.
import { afterEach, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/connect.js';
import { deleteClinicRows } from '../../src/repos/clinic-deletion.js';
import { createClinic } from '../../src/services/accounts.js';
import { UsageCounter } from '../../src/services/usage.js';
import { dialects, freshDatabase } from '../helpers/db.js';

const NOW = Date.UTC(2026, 2, 28, 12, 0, 0);

describe.each(dialects())('usage of a deleted clinic (%s)', (dialect) => {
  let database: Database | undefined;
  afterEach(async () => {
    await database?.close();
    database = undefined;
  });

  it("the next flush drops the deleted clinic's counts and writes the others'", async () => {
    database = await freshDatabase(dialect);
    const db = database.db;
    const keys: Record<string, { clinicId: string; keyId: string }> = {};
    for (const [n, name] of [
      [1, 'Alba'],
      [2, 'Bruma'],
    ] as const) {
      const clinic = await createClinic(db, { name, timezone: 'Europe/Madrid', currency: 'EUR', plan: 'premium', language: 'es' }, NOW);
      const keyId = `0a00000${n}-0000-4000-8000-000000000000`;
      await db
        .insertInto('api_keys')
        .values({
          id: keyId,
          clinic_id: clinic.id,
          name: 'k',
          key_hash: `hash${n}`,
          hint: 'abcd',
          created_by: null,
          created_at: NOW / 1000,
          expires_at: null,
          revoked_at: null,
          last_used_at: null,
          scopes: 'citas:read',
          allowed_ips: null,
          replaced_by: null,
        })
        .execute();
      keys[name] = { clinicId: clinic.id, keyId };
    }
    const usage = new UsageCounter(db);
    for (const k of Object.values(keys)) {
      usage.record({ ...k, timezone: 'Europe/Madrid', status: 200, errorCode: null, atMs: NOW });
      usage.record({ ...k, timezone: 'Europe/Madrid', status: 400, errorCode: 'invalid_parameter', atMs: NOW });
    }
    await database.writeTransaction((trx) => deleteClinicRows(trx, keys.Alba!.clinicId, dialect === 'sqlite'));
    await usage.flush();
    expect(usage.pending).toBe(0);
    const rows = await db.selectFrom('api_key_usage').select(['clinic_id', 'n']).execute();
    expect(rows.map((r) => r.clinic_id)).toEqual([keys.Bruma!.clinicId, keys.Bruma!.clinicId]);
    const errors = await db.selectFrom('api_key_errors').select('clinic_id').execute();
    expect(errors.map((r) => r.clinic_id)).toEqual([keys.Bruma!.clinicId]);
  });
});
