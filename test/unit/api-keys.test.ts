// API keys on a real database: format and entropy, only a keyed hash stored,
// verification with an in-process cache (no database read per request), revocation and expiry,
// last_used_at written at most once a minute, and the plan rule. The clock is injected.
import { createHmac } from 'node:crypto';
import {
  sql,
  type KyselyPlugin,
  type PluginTransformQueryArgs,
  type PluginTransformResultArgs,
  type QueryResult,
  type RootOperationNode,
  type UnknownRow,
} from 'kysely';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { loadConfig } from '../../src/config.js';
import type { Database } from '../../src/db/connect.js';
import type { Plan } from '../../src/domain/records.js';
import type { Clinic } from '../../src/repos/clinics.js';
import { createClinic } from '../../src/services/accounts.js';
import { DomainError } from '../../src/errors.js';
import { generateKey, hashKey, isApiEligible, keyHint, KeyService } from '../../src/services/api-keys.js';
import { dialects, freshDatabase } from '../helpers/db.js';

const T0 = Date.UTC(2026, 2, 28, 12, 0, 0);
const TEST_PEPPER = 'unit-test-pepper-0123456789abcdefghijklmnop';
const DEFAULT_PLANS = loadConfig({}).apiPlans;
const KEY_RE = /^svc_[A-Za-z0-9_-]{43,}$/;

/** Counts the queries a Kysely instance compiles (synchronously, as each query is issued). */
class QueryCounter implements KyselyPlugin {
  selects = 0;
  updates = 0;
  transformQuery(args: PluginTransformQueryArgs): RootOperationNode {
    if (args.node.kind === 'SelectQueryNode') this.selects++;
    if (args.node.kind === 'UpdateQueryNode') this.updates++;
    return args.node;
  }
  async transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    return args.result;
  }
}

/** The secret part of `<prefix>_<secret>` (the secret itself may contain `_`). */
const secretOf = (key: string) => key.slice(key.indexOf('_') + 1);

describe.each(dialects())('API keys on %s', (dialect) => {
  let database: Database;
  const clinics = {} as Record<Plan, Clinic>;
  const clock = { now: T0 };

  function service(opts: { pepper?: string; prefix?: string; apiPlans?: readonly Plan[]; counter?: QueryCounter } = {}) {
    const db = opts.counter ? database.db.withPlugin(opts.counter) : database.db;
    return new KeyService(db, {
      pepper: opts.pepper ?? TEST_PEPPER,
      prefix: opts.prefix ?? 'svc',
      apiPlans: opts.apiPlans ?? DEFAULT_PLANS,
      now: () => clock.now,
    });
  }

  const row = (id: string) => database.db.selectFrom('api_keys').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
  const keyCount = async () =>
    Number(
      (
        await database.db
          .selectFrom('api_keys')
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    );

  beforeAll(async () => {
    database = await freshDatabase(dialect);
    for (const plan of ['basic', 'pro', 'pro_total', 'enterprise', 'premium'] as const) {
      clinics[plan] = await createClinic(
        database.db,
        { name: `Clínica ${plan}`, timezone: 'America/Mexico_City', currency: 'MXN', plan },
        T0,
      );
    }
  });
  afterAll(async () => {
    await database.close();
  });

  describe('format', () => {
    it('is svc_ + at least 43 URL-safe characters carrying 256 random bits, never repeated', async () => {
      const keys = service();
      const seen = new Set<string>();
      for (let i = 0; i < 50; i++) {
        const issued = await keys.create({ clinicId: clinics.premium.id, name: `k${i}`, expiresAt: null, createdBy: null });
        expect(issued.key).toMatch(KEY_RE);
        expect(Buffer.from(secretOf(issued.key), 'base64url').length).toBeGreaterThanOrEqual(24); // >= 192 bits
        expect(Buffer.from(secretOf(issued.key), 'base64url').length).toBe(32);
        seen.add(issued.key);
      }
      expect(seen.size).toBe(50);
      for (let i = 0; i < 1000; i++) seen.add(generateKey('svc'));
      expect(seen.size).toBe(1050);
    });

    it('uses the configured prefix', async () => {
      const keys = service({ prefix: 'clin' });
      const issued = await keys.create({ clinicId: clinics.premium.id, name: 'prefixed', expiresAt: null, createdBy: null });
      expect(issued.key).toMatch(/^clin_[A-Za-z0-9_-]{43}$/);
      expect(await keys.verify(issued.key)).toMatchObject({ keyId: issued.id });
    });
  });

  describe('storage', () => {
    it('stores only HMAC-SHA256(pepper, key) in hex and a 4-character hint: the key is nowhere in the database', async () => {
      const keys = service();
      const issued = await keys.create({ clinicId: clinics.premium.id, name: 'Zapier', expiresAt: null, createdBy: null });
      const stored = await row(issued.id);
      expect(stored.key_hash).toBe(createHmac('sha256', TEST_PEPPER).update(issued.key).digest('hex'));
      expect(stored.key_hash).toMatch(/^[0-9a-f]{64}$/);
      expect(stored.hint).toBe(issued.key.slice(-4));
      expect(issued.hint).toBe(stored.hint);
      expect(stored).toMatchObject({
        clinic_id: clinics.premium.id,
        name: 'Zapier',
        revoked_at: null,
        last_used_at: null,
        expires_at: null,
      });

      const everything = await dumpDatabase(database);
      expect(everything).toContain(stored.key_hash); // the dump does cover api_keys
      expect(everything).not.toContain(issued.key);
      expect(everything).not.toContain(secretOf(issued.key));
      expect(everything).not.toContain(secretOf(issued.key).slice(0, 8));
      // Nor is it derivable without the pepper: a plain SHA-256 of the key is not what is stored.
      expect(stored.key_hash).not.toBe(createHmac('sha256', '').update(issued.key).digest('hex'));
    });

    it('lists keys without hashes or keys, newest first', async () => {
      const keys = service();
      clock.now = T0 + 1000;
      const older = await keys.create({ clinicId: clinics.enterprise.id, name: 'older', expiresAt: null, createdBy: null });
      clock.now = T0 + 2000;
      const newer = await keys.create({ clinicId: clinics.enterprise.id, name: 'newer', expiresAt: null, createdBy: null });
      clock.now = T0;
      const list = await keys.list(clinics.enterprise.id);
      expect(list.map((k) => k.id)).toEqual([newer.id, older.id]);
      for (const k of list) expect(k).not.toHaveProperty('key_hash');
      const text = JSON.stringify(list);
      expect(text).not.toContain(older.key);
      expect(text).not.toContain(newer.key);
      expect(list[0]!.hint).toBe(newer.key.slice(-4));
    });

    it('hashKey, keyHint and isApiEligible', () => {
      expect(hashKey('p'.repeat(32), 'svc_abc')).toBe(createHmac('sha256', 'p'.repeat(32)).update('svc_abc').digest('hex'));
      expect(hashKey('q'.repeat(32), 'svc_abc')).not.toBe(hashKey('p'.repeat(32), 'svc_abc'));
      expect(keyHint('svc_abcdefgh')).toBe('efgh');
      expect(isApiEligible('premium', DEFAULT_PLANS)).toBe(true);
      expect(isApiEligible('basic', DEFAULT_PLANS)).toBe(false);
    });
  });

  describe('verify', () => {
    it('returns the identity of a live key', async () => {
      const keys = service();
      const issued = await keys.create({ clinicId: clinics.pro_total.id, name: 'live', expiresAt: null, createdBy: null });
      expect(await keys.verify(issued.key)).toEqual({
        keyId: issued.id,
        mode: 'live',
        ownerClinicId: clinics.pro_total.id,
        keyName: 'live',
        createdAt: issued.createdAt,
        clinicId: clinics.pro_total.id,
        clinicName: clinics.pro_total.name,
        timezone: 'America/Mexico_City',
        currency: 'MXN',
        expiresAt: null,
        revoked: false,
        scopes: ['citas:read', 'clientas:read', 'llamadas:read', 'eventos:read', 'contacto:read'],
        scopeBits: 31,
        allowedIps: null,
      });
      // A fresh service (another instance, empty cache) agrees.
      expect(await service().verify(issued.key)).toMatchObject({ keyId: issued.id });
    });

    it('refuses the key under another pepper, altered keys and malformed tokens', async () => {
      const keys = service();
      const issued = await keys.create({ clinicId: clinics.premium.id, name: 'pepper', expiresAt: null, createdBy: null });
      expect(await service({ pepper: 'another-pepper-0123456789abcdefghijklmnop' }).verify(issued.key)).toBeNull();
      const last = issued.key.at(-1) === 'A' ? 'B' : 'A';
      expect(await keys.verify(issued.key.slice(0, -1) + last)).toBeNull();
      expect(await keys.verify(`xyz_${secretOf(issued.key)}`)).toBeNull();
      expect(await keys.verify(secretOf(issued.key))).toBeNull();
      for (const bad of ['', 'svc_', 'svc_ a', `${issued.key} `, `${issued.key}\n`, 'x'.repeat(300), 'svc_%%%%%%%%%%']) {
        expect(await keys.verify(bad), JSON.stringify(bad)).toBeNull();
      }
      expect(await keys.verify(issued.key)).not.toBeNull();
    });

    it('revocation is immediate on the revoking instance and within 5 s on another', async () => {
      const a = service();
      const b = service();
      const issued = await a.create({ clinicId: clinics.premium.id, name: 'to revoke', expiresAt: null, createdBy: null });
      clock.now = T0;
      expect(await a.verify(issued.key)).not.toBeNull();
      expect(await b.verify(issued.key)).not.toBeNull();
      expect(await a.revoke(clinics.premium.id, issued.id)).toBe(true);
      expect(await a.verify(issued.key)).toBeNull();
      expect((await row(issued.id)).revoked_at).toBe(T0 / 1000);
      clock.now = T0 + 5000;
      expect(await b.verify(issued.key)).toBeNull();
      expect(await a.revoke(clinics.premium.id, issued.id)).toBe(false); // already revoked
      expect(await a.revoke(clinics.premium.id, '00000000-0000-4000-8000-000000000000')).toBe(false);
      clock.now = T0;
    });

    it("every key look-up and revocation names its clinic: another clinic's key is not found and stays live", async () => {
      const keys = service();
      const issued = await keys.create({ clinicId: clinics.premium.id, name: 'tenant', expiresAt: null, createdBy: null });
      clock.now = T0;
      expect(await keys.verify(issued.key)).not.toBeNull(); // cached as live on this instance
      expect(await keys.get(clinics.enterprise.id, issued.id)).toBeUndefined();
      expect(await keys.revoke(clinics.enterprise.id, issued.id)).toBe(false);
      expect((await row(issued.id)).revoked_at).toBeNull();
      expect(await keys.verify(issued.key)).not.toBeNull();
      expect(keys.verifyCached(issued.key)).not.toBeNull();
      // The operator's look-up (the CLI names a key, not a clinic) finds its clinic, and only that.
      expect(await keys.locateKey(issued.id)).toBe(clinics.premium.id);
      expect(await keys.locateKey('00000000-0000-4000-8000-000000000000')).toBeUndefined();
      expect((await keys.get(clinics.premium.id, issued.id))?.name).toBe('tenant');
      expect(await keys.revoke(clinics.premium.id, issued.id)).toBe(true);
      expect(await keys.verify(issued.key)).toBeNull();
    });

    it('revoking a key already revoked elsewhere (e.g. by the CLI) still evicts it from this instance at once', async () => {
      const here = service();
      const elsewhere = service();
      const issued = await here.create({ clinicId: clinics.premium.id, name: 'twice', expiresAt: null, createdBy: null });
      clock.now = T0;
      expect(await here.verify(issued.key)).not.toBeNull();
      expect(await elsewhere.revoke(clinics.premium.id, issued.id)).toBe(true);
      expect(await here.verify(issued.key)).not.toBeNull(); // still cached here, for up to 4 s
      expect(await here.revoke(clinics.premium.id, issued.id)).toBe(false);
      expect(await here.verify(issued.key)).toBeNull();
    });

    it('a lookup already in flight when the key is revoked cannot put it back in the cache as live', async () => {
      const a = service();
      const issued = await a.create({ clinicId: clinics.premium.id, name: 'raced', expiresAt: null, createdBy: null });
      clock.now = T0;
      // The first verify misses the cache and reads the row (still live) while revoke() runs.
      const inFlight = a.verify(issued.key);
      await a.revoke(clinics.premium.id, issued.id);
      await inFlight;
      expect(await a.verify(issued.key)).toBeNull();
      expect(a.verifyCached(issued.key)).toBeNull();
    });

    it('respects expires_at, to the second, even for a cached key', async () => {
      const keys = service();
      const expiresAt = T0 / 1000 + 3600;
      const issued = await keys.create({ clinicId: clinics.premium.id, name: 'expiring', expiresAt, createdBy: null });
      expect((await row(issued.id)).expires_at).toBe(expiresAt);
      clock.now = expiresAt * 1000 - 2000;
      expect(await keys.verify(issued.key)).toMatchObject({ expiresAt });
      clock.now = expiresAt * 1000 - 1;
      expect(await keys.verify(issued.key)).not.toBeNull(); // from the cache
      clock.now = expiresAt * 1000;
      expect(await keys.verify(issued.key)).toBeNull();
      clock.now = expiresAt * 1000 + 86_400_000;
      expect(await service().verify(issued.key)).toBeNull();

      clock.now = T0;
      const stillborn = await keys.create({ clinicId: clinics.premium.id, name: 'expired', expiresAt: T0 / 1000 - 1, createdBy: null });
      expect(await keys.verify(stillborn.key)).toBeNull();
    });
  });

  describe('cache', () => {
    it('verified keys are served from memory for up to 4 s: no database read per request', async () => {
      const counter = new QueryCounter();
      const keys = service({ counter });
      const issued = await keys.create({ clinicId: clinics.premium.id, name: 'cached', expiresAt: null, createdBy: null });
      clock.now = T0;
      expect(await keys.verify(issued.key)).not.toBeNull();
      const afterFirst = counter.selects;
      expect(afterFirst).toBeGreaterThan(0);
      for (let i = 1; i <= 100; i++) {
        clock.now = T0 + i * 39; // up to 3.9 s later
        expect(await keys.verify(issued.key)).not.toBeNull();
      }
      expect(counter.selects).toBe(afterFirst);
      clock.now = T0 + 5000;
      expect(await keys.verify(issued.key)).not.toBeNull();
      expect(counter.selects).toBeGreaterThan(afterFirst); // reloaded once the entry is stale
      clock.now = T0;
    });

    it('a row deleted behind its back is still accepted within the TTL, refused after it', async () => {
      const keys = service();
      const issued = await keys.create({ clinicId: clinics.premium.id, name: 'deleted', expiresAt: null, createdBy: null });
      clock.now = T0;
      expect(await keys.verify(issued.key)).not.toBeNull();
      await database.db.deleteFrom('api_keys').where('id', '=', issued.id).execute();
      clock.now = T0 + 3000;
      expect(await keys.verify(issued.key)).toMatchObject({ keyId: issued.id });
      clock.now = T0 + 5000;
      expect(await keys.verify(issued.key)).toBeNull();
      clock.now = T0;
    });

    it('a revocation written directly to the database is seen once the TTL passes', async () => {
      const keys = service();
      const issued = await keys.create({ clinicId: clinics.premium.id, name: 'revoked elsewhere', expiresAt: null, createdBy: null });
      clock.now = T0;
      expect(await keys.verify(issued.key)).not.toBeNull();
      await database.db
        .updateTable('api_keys')
        .set({ revoked_at: T0 / 1000 })
        .where('id', '=', issued.id)
        .execute();
      clock.now = T0 + 1000;
      expect(await keys.verify(issued.key)).not.toBeNull();
      clock.now = T0 + 5000;
      expect(await keys.verify(issued.key)).toBeNull();
      clock.now = T0 + 6000;
      expect(await keys.verify(issued.key)).toBeNull(); // a revoked entry stays refused from the cache too
      clock.now = T0;
    });
  });

  describe('last_used_at', () => {
    it('is written on first use, then at most once a minute per key', async () => {
      const counter = new QueryCounter();
      const keys = service({ counter });
      const issued = await keys.create({ clinicId: clinics.premium.id, name: 'usage', expiresAt: null, createdBy: null });
      const other = await keys.create({ clinicId: clinics.premium.id, name: 'usage 2', expiresAt: null, createdBy: null });
      const lastUsed = async (id: string) => (await row(id)).last_used_at;
      expect(await lastUsed(issued.id)).toBeNull();

      clock.now = T0;
      await keys.verify(issued.key);
      expect(counter.updates).toBe(1);
      await vi.waitFor(async () => expect(await lastUsed(issued.id)).toBe(T0 / 1000));

      for (let sec = 1; sec < 60; sec++) {
        clock.now = T0 + sec * 1000;
        expect(await keys.verify(issued.key)).not.toBeNull();
      }
      expect(counter.updates).toBe(1); // no write for 59 more uses within the minute
      expect(await lastUsed(issued.id)).toBe(T0 / 1000);

      clock.now = T0 + 59_000;
      await keys.verify(other.key); // another key is written independently
      expect(counter.updates).toBe(2);
      await vi.waitFor(async () => expect(await lastUsed(other.id)).toBe(T0 / 1000 + 59));

      clock.now = T0 + 60_000;
      await keys.verify(issued.key);
      expect(counter.updates).toBe(3);
      await vi.waitFor(async () => expect(await lastUsed(issued.id)).toBe(T0 / 1000 + 60));
      clock.now = T0;
    });

    it('a refused key is not marked as used', async () => {
      const counter = new QueryCounter();
      const keys = service({ counter });
      const issued = await keys.create({ clinicId: clinics.premium.id, name: 'never ok', expiresAt: T0 / 1000 - 60, createdBy: null });
      clock.now = T0;
      expect(await keys.verify(issued.key)).toBeNull();
      expect(counter.updates).toBe(0);
      expect((await row(issued.id)).last_used_at).toBeNull();
    });
  });

  describe('plan rule', () => {
    it('refuses basic and pro clinics with plan_not_eligible and writes nothing', async () => {
      const keys = service();
      for (const plan of ['basic', 'pro'] as const) {
        const before = await keyCount();
        const err = await keys
          .create({ clinicId: clinics[plan].id, name: 'nope', expiresAt: null, createdBy: null })
          .catch((e: unknown) => e);
        expect(err).toBeInstanceOf(DomainError);
        expect((err as DomainError).reason).toBe('plan_not_eligible');
        expect((err as DomainError).message).toContain(`"${plan}"`);
        expect((err as DomainError).message).toContain('pro_total, enterprise, premium');
        expect(await keyCount()).toBe(before);
      }
    });

    it('allows pro_total, enterprise and premium by default', async () => {
      const keys = service();
      for (const plan of ['pro_total', 'enterprise', 'premium'] as const) {
        const issued = await keys.create({ clinicId: clinics[plan].id, name: `ok ${plan}`, expiresAt: null, createdBy: null });
        expect(await keys.verify(issued.key)).toMatchObject({ clinicId: clinics[plan].id });
      }
    });

    it('follows API_PLANS', async () => {
      const keys = service({ apiPlans: loadConfig({ API_PLANS: 'basic' }).apiPlans });
      const issued = await keys.create({ clinicId: clinics.basic.id, name: 'basic ok', expiresAt: null, createdBy: null });
      expect(issued.key).toMatch(KEY_RE);
      await expect(
        keys.create({ clinicId: clinics.premium.id, name: 'premium not', expiresAt: null, createdBy: null }),
      ).rejects.toMatchObject({ reason: 'plan_not_eligible' });
    });

    it('does not re-check the plan of existing keys at request time', async () => {
      const keys = service();
      const doomed = await createClinic(database.db, { name: 'Downgraded', plan: 'premium' }, T0);
      const issued = await keys.create({ clinicId: doomed.id, name: 'before downgrade', expiresAt: null, createdBy: null });
      await database.db.updateTable('clinics').set({ plan: 'basic' }).where('id', '=', doomed.id).execute();
      clock.now = T0 + 10_000;
      expect(await service().verify(issued.key)).toMatchObject({ clinicId: doomed.id });
      clock.now = T0;
    });

    it('reports an unknown clinic and a bad name', async () => {
      const keys = service();
      await expect(
        keys.create({ clinicId: '00000000-0000-4000-8000-000000000000', name: 'x', expiresAt: null, createdBy: null }),
      ).rejects.toMatchObject({ reason: 'not_found', details: { field: 'clinic' } });
      await expect(keys.create({ clinicId: clinics.premium.id, name: '   ', expiresAt: null, createdBy: null })).rejects.toMatchObject({
        reason: 'invalid_input',
        details: { field: 'name' },
      });
      await expect(
        keys.create({ clinicId: clinics.premium.id, name: 'n'.repeat(101), expiresAt: null, createdBy: null }),
      ).rejects.toMatchObject({ reason: 'invalid_input', details: { field: 'name' } });
    });
  });
});

/** Every row of every table, as one string. */
async function dumpDatabase(database: Database): Promise<string> {
  const tables =
    database.dialect === 'sqlite'
      ? await sql<{ name: string }>`select name from sqlite_master where type = 'table'`.execute(database.db)
      : await sql<{ name: string }>`select table_name as name from information_schema.tables where table_schema = current_schema()`.execute(
          database.db,
        );
  const names = tables.rows.map((r) => r.name);
  expect(names).toContain('api_keys');
  let all = '';
  for (const name of names) {
    const rows = await sql`select * from ${sql.table(name)}`.execute(database.db);
    all += JSON.stringify(rows.rows);
  }
  return all;
}
