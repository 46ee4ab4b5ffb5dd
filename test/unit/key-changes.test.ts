// Editing and rolling API keys (KeyService.update, .roll) on a real database: a change is read at
// once by the instance that made it (its cache entry evicted), by another instance within the
// cache's 4 s, and by every instance at once when announced (the announcer is told the key id);
// a look-up in flight while the key changes never caches the old state; a roll makes one new key
// with the old one's name, scopes, addresses and lifetime, and two rolls at once make one.
import type { KyselyPlugin } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/connect.js';
import { DomainError } from '../../src/errors.js';
import type { Clinic } from '../../src/repos/clinics.js';
import { createClinic } from '../../src/services/accounts.js';
import { KeyService } from '../../src/services/api-keys.js';
import { dialects, freshDatabase } from '../helpers/db.js';

const T0 = Date.UTC(2026, 2, 28, 12, 0, 0);
const T0_S = T0 / 1000;

describe.each(dialects())('key changes on %s', (dialect) => {
  let database: Database;
  let clinic: Clinic;
  let other: Clinic;
  const clock = { now: T0 };
  const announced: string[] = [];

  const service = (announce = false) =>
    new KeyService(database.db, {
      pepper: 'key-changes-pepper-0123456789abcdefghijklmnop',
      prefix: 'svc',
      apiPlans: ['premium'],
      now: () => clock.now,
      announceChange: announce
        ? async (id) => {
            announced.push(id);
            return true;
          }
        : undefined,
    });
  const make = (keys: KeyService, over: object = {}) =>
    keys.create({ clinicId: clinic.id, name: 'Zapier', expiresAt: null, createdBy: null, ...over });

  beforeAll(async () => {
    database = await freshDatabase(dialect);
    clinic = await createClinic(database.db, { name: 'Uno', timezone: 'Europe/Madrid', currency: 'EUR', plan: 'premium' }, T0);
    other = await createClinic(database.db, { name: 'Dos', timezone: 'Europe/Madrid', currency: 'EUR', plan: 'premium' }, T0);
  });
  afterAll(async () => {
    await database.close();
  });

  it('an edit is read at once here, within the cache TTL elsewhere, and announced', async () => {
    clock.now = T0;
    const here = service(true);
    const elsewhere = service();
    const k = await make(here);
    expect((await here.verify(k.key))!.scopes).toHaveLength(5);
    expect((await elsewhere.verify(k.key))!.scopes).toHaveLength(5);
    const out = await here.update(clinic.id, k.id, { name: 'Make', scopes: ['citas:read'], allowedIps: ['203.0.113.0/24'] });
    expect(out).toMatchObject({ announced: true, key: { name: 'Make', scopes: 'citas:read', allowed_ips: '203.0.113.0/24' } });
    expect(announced).toContain(k.id);
    const now = (await here.verify(k.key))!;
    expect([now.keyName, now.scopes, now.allowedIps?.list]).toEqual(['Make', ['citas:read'], ['203.0.113.0/24']]);
    // the other instance's cache entry is at most 4 s old
    expect((await elsewhere.verify(k.key))!.scopes).toHaveLength(5);
    clock.now = T0 + 4_001;
    expect((await elsewhere.verify(k.key))!.scopes).toEqual(['citas:read']);
    // an instance told of the change (services/key-changes.ts calls evict) reads it at once
    await here.update(clinic.id, k.id, { scopes: ['llamadas:read'] });
    elsewhere.evict(k.id);
    expect((await elsewhere.verify(k.key))!.scopes).toEqual(['llamadas:read']);
  });

  it("an edit names its clinic: another clinic's key is not found and unchanged; a revoked key cannot be changed", async () => {
    const keys = service();
    const k = await make(keys);
    expect(await keys.update(other.id, k.id, { name: 'x' })).toBeUndefined();
    expect((await keys.get(clinic.id, k.id))!.name).toBe('Zapier');
    await keys.revoke(clinic.id, k.id);
    await expect(keys.update(clinic.id, k.id, { name: 'x' })).rejects.toMatchObject({ reason: 'conflict' });
    await expect(keys.update(clinic.id, k.id, { name: ' ' })).rejects.toMatchObject({
      reason: 'invalid_input',
      details: { field: 'name' },
    });
  });

  it('a roll: a new key like the old (name, scopes, addresses, lifetime); the old one until the overlap ends', async () => {
    clock.now = T0;
    const keys = service(true);
    const old = await make(keys, {
      scopes: ['citas:read', 'eventos:read'],
      allowedIps: ['198.51.100.0/24'],
      expiresAt: T0_S + 90 * 86_400,
    });
    clock.now = T0 + 10 * 86_400_000;
    expect(await keys.verify(old.key)).not.toBeNull();
    const rolled = (await keys.roll(clinic.id, old.id, 3_600, null))!;
    const nowS = T0_S + 10 * 86_400;
    expect(rolled.oldExpiresAt).toBe(nowS + 3_600);
    expect(rolled.issued).toMatchObject({
      name: 'Zapier',
      scopes: ['citas:read', 'eventos:read'],
      allowedIps: ['198.51.100.0/24'],
      expiresAt: nowS + 90 * 86_400,
    });
    expect(announced).toContain(old.id);
    expect((await keys.get(clinic.id, old.id))!).toMatchObject({ replaced_by: rolled.issued.id, expires_at: nowS + 3_600 });
    // the old key, cached a moment ago, now carries its new expiry
    clock.now += 3_599_000;
    expect(await keys.verify(old.key)).not.toBeNull();
    clock.now += 1_000;
    expect(await keys.verify(old.key)).toBeNull();
    expect((await keys.verify(rolled.issued.key))!).toMatchObject({ keyName: 'Zapier', scopes: ['citas:read', 'eventos:read'] });
  });

  it('during the overlap the old keys follow the newest: its edits and its revocation reach them, and are announced', async () => {
    clock.now = T0;
    const keys = service(true);
    const elsewhere = service();
    const a = await make(keys, { name: 'chain' });
    const b = (await keys.roll(clinic.id, a.id, 7 * 86_400, null))!.issued;
    // rolled again at once, with no overlap for b: a still works, and follows c through b
    clock.now = T0 + 60_000;
    const c = (await keys.roll(clinic.id, b.id, 0, null))!.issued;
    expect((await elsewhere.verify(a.key))!.scopes).toHaveLength(5);
    announced.length = 0;
    const out = (await keys.update(clinic.id, c.id, { scopes: ['citas:read'], allowedIps: ['203.0.113.0/24'], name: 'chain 2' }))!;
    expect(out.followers).toEqual([a.id]);
    expect(announced).toEqual([c.id, a.id]);
    elsewhere.evict(a.id);
    const followed = (await elsewhere.verify(a.key))!;
    expect([followed.keyName, followed.scopes, followed.allowedIps?.list]).toEqual(['chain 2', ['citas:read'], ['203.0.113.0/24']]);
    // b has ended: it is left as it was
    expect((await keys.get(clinic.id, b.id))!.scopes.split(' ')).toHaveLength(5);
    // an old key is not changed on its own: the refusal names its replacement
    await expect(keys.update(clinic.id, a.id, { scopes: ['llamadas:read'] })).rejects.toThrow(
      new RegExp(`was rolled: .*replacement, key ${b.id}`),
    );
    const revoked = (await keys.revokeEverywhere(clinic.id, c.id))!;
    expect([revoked.revoked, revoked.followers]).toEqual([true, [a.id]]);
    expect(announced).toContain(a.id);
    elsewhere.evict(a.id);
    expect([await elsewhere.verify(a.key), await keys.verify(c.key)]).toEqual([null, null]);
  });

  it('an old key may be revoked alone: its replacement keeps working; an old key whose overlap ended is left alone', async () => {
    clock.now = T0;
    const keys = service();
    const a = await make(keys, { name: 'alone' });
    const b = (await keys.roll(clinic.id, a.id, 3_600, null))!.issued;
    expect(await keys.revokeEverywhere(clinic.id, a.id)).toMatchObject({ revoked: true, followers: [] });
    expect([await keys.verify(a.key), (await keys.verify(b.key))?.keyId]).toEqual([null, b.id]);
    const old = await make(keys, { name: 'ended' });
    const next = (await keys.roll(clinic.id, old.id, 60, null))!.issued;
    clock.now = T0 + 61_000;
    expect((await keys.update(clinic.id, next.id, { scopes: ['citas:read'] }))!.followers).toEqual([]);
    expect((await keys.get(clinic.id, old.id))!).toMatchObject({ revoked_at: null, scopes: expect.stringContaining('contacto:read') });
    expect((await keys.revokeEverywhere(clinic.id, next.id))!.followers).toEqual([]);
    expect((await keys.get(clinic.id, old.id))!.revoked_at).toBeNull();
  });

  it('two rolls of one key at once make one new key; the other is refused', async () => {
    clock.now = T0;
    const keys = service();
    const old = await make(keys, { name: 'raced' });
    const outcomes = await Promise.allSettled([keys.roll(clinic.id, old.id, 60, null), service().roll(clinic.id, old.id, 60, null)]);
    const won = outcomes.filter((o) => o.status === 'fulfilled').map((o) => o.value!.issued.id);
    const lost = outcomes.filter((o) => o.status === 'rejected').map((o) => o.reason as DomainError);
    expect([won.length, lost.map((e) => e.reason)]).toEqual([1, ['conflict']]);
    const raced = (await keys.list(clinic.id)).filter((k) => k.name === 'raced');
    expect(raced.map((k) => k.id).sort()).toEqual([old.id, won[0]!].sort());
    expect(raced.find((k) => k.id === old.id)!.replaced_by).toBe(won[0]);
  });

  it('refuses an overlap out of range, and rolling a revoked, expired or already rolled key; an unknown id is undefined', async () => {
    clock.now = T0;
    const keys = service();
    const k = await make(keys);
    for (const bad of [-1, 7 * 86_400 + 1, 1.5])
      await expect(keys.roll(clinic.id, k.id, bad, null)).rejects.toMatchObject({ reason: 'invalid_input', details: { field: 'overlap' } });
    expect(await keys.roll(other.id, k.id, 0, null)).toBeUndefined();
    const expired = await make(keys, { expiresAt: T0_S - 1 });
    await expect(keys.roll(clinic.id, expired.id, 0, null)).rejects.toThrow(/has expired/);
    await keys.revoke(clinic.id, k.id);
    await expect(keys.roll(clinic.id, k.id, 0, null)).rejects.toThrow(/is revoked/);
    const once = await make(keys);
    const next = (await keys.roll(clinic.id, once.id, 7 * 86_400, null))!;
    await expect(keys.roll(clinic.id, once.id, 0, null)).rejects.toThrow(
      new RegExp(`rolled already: roll its replacement, key ${next.issued.id}`),
    );
  });
});

// PostgreSQL only: its pool runs a change on another connection while a look-up's read is held
// (SQLite's one connection would wait for the held read, so the race cannot be staged there).
describe.each(dialects().filter((d) => d === 'postgres'))('a look-up in flight while its key changes, on %s', (dialect) => {
  let database: Database;
  let clinic: Clinic;
  beforeAll(async () => {
    database = await freshDatabase(dialect);
    clinic = await createClinic(database.db, { name: 'Uno', timezone: 'Europe/Madrid', currency: 'EUR', plan: 'premium' }, T0);
  });
  afterAll(async () => {
    await database.close();
  });

  it('reads the key again: the state from before the change is never cached', async () => {
    // Holds the result of the look-up by hash until released: the key is read, then changed and
    // announced (evict) before the look-up finishes.
    let hold: Promise<void> | null = null;
    let release = () => {};
    let reached = () => {};
    const readIt = new Promise<void>((r) => (reached = r));
    const gate: KyselyPlugin = {
      transformQuery: (args) => args.node,
      async transformResult(args) {
        if (hold && JSON.stringify(args.result.rows).includes('"key_hash"')) {
          const h = hold;
          hold = null;
          reached();
          await h;
        }
        return args.result;
      },
    };
    const opts = { pepper: 'key-changes-pepper-0123456789abcdefghijklmnop', prefix: 'svc', apiPlans: ['premium' as const], now: () => T0 };
    const here = new KeyService(database.db.withPlugin(gate), opts);
    const elsewhere = new KeyService(database.db, opts);
    const k = await elsewhere.create({ clinicId: clinic.id, name: 'raced', expiresAt: null, createdBy: null });
    hold = new Promise<void>((r) => (release = r));
    const inFlight = here.verify(k.key);
    await readIt;
    await elsewhere.update(clinic.id, k.id, { scopes: ['citas:read'] });
    here.evict(k.id); // the announcement arrives
    release();
    await inFlight;
    expect(here.verifyCached(k.key)?.scopes).toEqual(['citas:read']);
    expect((await here.verify(k.key))!.scopes).toEqual(['citas:read']);
  });
});
