// Migration 009-key-scopes on a database that has keys: every key made before scopes existed gets
// all five (no integration changes), from any address, never rolled; the keys' service then reads
// them as such. Both databases.
import { Migrator, type Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type Database } from '../../src/db/connect.js';
import { migrationsFor } from '../../src/db/migrations/index.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { hashKey, KeyService } from '../../src/services/api-keys.js';
import { dialects, freshTarget } from '../helpers/db.js';

const PEPPER = 'migration-pepper-0123456789abcdefghijklmnop';

describe.each(dialects())('migration 009-key-scopes on %s', (dialect) => {
  let database: Database;
  beforeAll(async () => {
    database = await openDatabase(await freshTarget(dialect));
  });
  afterAll(async () => {
    await database?.close();
  });

  it('gives every existing key all five scopes, any address, no replacement', async () => {
    const migrator = new Migrator({ db: database.db, provider: { getMigrations: async () => migrationsFor(database.dialect) } });
    const before = await migrator.migrateTo('008-webhook-event-types');
    expect(before.error).toBeUndefined();
    // A clinic and a key as they were stored before the migration (no scopes column yet).
    const db = database.db as unknown as Kysely<Record<string, Record<string, unknown>>>;
    await db
      .insertInto('clinics')
      .values({ id: 'c1', name: 'Antes', timezone: 'Europe/Madrid', currency: 'EUR', plan: 'premium', language: 'es', created_at: 0 })
      .execute();
    const keys = new KeyService(database.db, { pepper: PEPPER, prefix: 'svc', apiPlans: ['premium'], now: () => 1_000_000 });
    const key = 'svc_' + 'k'.repeat(43);
    await db
      .insertInto('api_keys')
      .values({
        id: '0e000000-0000-4000-8000-000000000001',
        clinic_id: 'c1',
        name: 'Old',
        key_hash: hashKey(PEPPER, key),
        hint: 'kkkk',
        created_by: null,
        created_at: 0,
        expires_at: null,
        revoked_at: null,
        last_used_at: null,
      })
      .execute();

    expect(await migrateToLatest(database)).toContain('009-key-scopes');
    const row = await database.db.selectFrom('api_keys').selectAll().executeTakeFirstOrThrow();
    expect([row.scopes, row.allowed_ips, row.replaced_by]).toEqual([
      'citas:read clientas:read llamadas:read eventos:read contacto:read',
      null,
      null,
    ]);
    expect(await keys.verify(key)).toMatchObject({
      scopes: ['citas:read', 'clientas:read', 'llamadas:read', 'eventos:read', 'contacto:read'],
      scopeBits: 31,
      allowedIps: null,
    });
  });
});
