// API keys: issue, verify, list, edit, roll, revoke. Only HMAC-SHA256(pepper, key) is stored, with
// a 4-character hint for display. Verification is on the hot path, so verified keys (and the
// clinic facts, scopes and address rules a request needs) are cached in process for a few
// seconds; changing a key through this service (a revocation, an edit, a roll) evicts it at once,
// and, with REDIS_URL, announces the change so that every instance evicts it at once too
// (services/key-changes.ts); without Redis, or while it is down, other instances see it within
// the cache TTL (<= 5 s).
//
// Longer than most files here: the key cache and every change of a key (create, edit, roll,
// revoke) are one class, because each change must evict the cache and fence look-ups in flight;
// what needs no storage (format, hash, status, checks) is key-rules.ts.
import { randomUUID, timingSafeEqual } from 'node:crypto';
import type { Kysely } from 'kysely';
import { whenWritable } from '../db/connect.js';
import type { DB } from '../db/schema.js';
import { readStoredAllowedIps, storedAllowedIps } from '../domain/allowed-ips.js';
import type { Plan } from '../domain/records.js';
import { readStoredScopes, storedScopes, type Scope } from '../domain/scopes.js';
import { DomainError } from '../errors.js';
import {
  findApiKeyByHash,
  getApiKey,
  insertApiKey,
  listApiKeys,
  livePredecessors,
  locateApiKey,
  markApiKeyReplaced,
  revokeApiKey,
  revokeFollowers,
  touchApiKeys,
  updateApiKey,
  updateFollowers,
  type ApiKeyChanges,
  type ApiKeyListing,
  type ApiKeyRow,
} from '../repos/api-keys.js';
import { getClinic } from '../repos/clinics.js';
import { disableEndpointsOfCredentials } from '../repos/webhooks.js';
import { runInBackground, type BackgroundErrorHandler } from './background.js';
import {
  authenticatedKey,
  cacheKey,
  checkedName,
  checkedScopes,
  generateKey,
  hashKey,
  invalid,
  isApiEligible,
  keyHint,
  keyModeOf,
  ROLL_OVERLAP,
  rollRefusal,
  type AuthenticatedKey,
  type IssuedKey,
  type KeyChanges,
  type KeyMode,
  type NewKey,
} from './key-rules.js';
import { sandboxRefusal } from './sandbox.js';
import { BACKGROUND_WRITE_WAIT_MS, INTERACTIVE_WRITE_WAIT_MS } from './write-lock.js';

export type { ApiKeyListing };
export {
  generateKey,
  hashKey,
  isApiEligible,
  keyHint,
  keyModeOf,
  keyStatus,
  looksLikeApiKey,
  ROLL_OVERLAP,
  type AuthenticatedKey,
  type IssuedKey,
  type KeyChanges,
  type KeyMode,
  type KeyStatus,
  type NewKey,
} from './key-rules.js';

const TOKEN_RE = /^[A-Za-z0-9_-]{8,256}$/;
const CACHE_TTL_MS = 4_000;
const CACHE_MAX = 10_000;
const LAST_USED_EVERY_S = 60;
/** How long a change is remembered for look-ups that were in flight when it was made. */
const CHANGES_KEPT_MS = 60_000;

export interface KeyServiceOptions {
  pepper: string;
  prefix: string;
  apiPlans: readonly Plan[];
  now?: () => number;
  onBackgroundError?: BackgroundErrorHandler;
  /**
   * Tells the other instances that `keyId` changed: revoked, edited or rolled (REDIS_URL:
   * services/key-changes.ts); resolves with whether it was announced, never rejects.
   */
  announceChange?: (keyId: string) => Promise<boolean>;
  /**
   * The sandbox id of a live clinic, made on first use (services/sandbox.ts): what a test key
   * reads. Unset: test keys are refused (created and presented alike).
   */
  sandboxFor?: (clinicId: string) => Promise<string>;
}

export interface RevokeOutcome {
  /** false: it was revoked already (it is evicted here all the same, and announced again) */
  revoked: boolean;
  /** the keys it replaced that were still in their roll's overlap, revoked with it */
  followers: string[];
  /** whether every instance was told at once (false: no REDIS_URL, or Redis did not answer) */
  announced: boolean;
}

export interface UpdateOutcome {
  key: ApiKeyRow;
  /** the keys it replaced that are still in their roll's overlap, changed with it */
  followers: string[];
  /** whether every instance was told at once (false: no REDIS_URL, or Redis did not answer) */
  announced: boolean;
}

export interface RollOutcome {
  /** the new key: shown once */
  issued: IssuedKey;
  /** when the old key stops working */
  oldExpiresAt: number;
  announced: boolean;
}

export class KeyService {
  private readonly cache = new Map<string, { key: AuthenticatedKey; at: number }>();
  private readonly lastWritten = new Map<string, number>();
  /**
   * Keys changed (revoked, edited, rolled) here or announced by others, with the change's number
   * and time: a look-up that was already in flight when its key changed may have read it before
   * the change, and reads it again rather than cache (or answer with) the old state.
   */
  private readonly changed = new Map<string, { seq: number; at: number }>();
  private changes = 0;
  private readonly now: () => number;

  constructor(
    private readonly db: Kysely<DB>,
    private readonly opts: KeyServiceOptions,
  ) {
    this.now = opts.now ?? Date.now;
  }

  /** The plans whose clinics may create keys (API_PLANS). */
  get apiPlans(): readonly Plan[] {
    return this.opts.apiPlans;
  }

  async create(input: NewKey): Promise<IssuedKey> {
    const name = checkedName(input.name);
    const scopes = checkedScopes(input.scopes);
    const allowedIps = input.allowedIps === undefined || input.allowedIps === null ? null : [...input.allowedIps];
    // An expiry already past makes a key that never works: the surfaces refuse it as input (the
    // dashboard's date, the CLI's --expires-in); tests make such keys on purpose.
    const createdAt = Math.floor(this.now() / 1000);
    const clinic = await getClinic(this.db, input.clinicId);
    if (!clinic) throw new DomainError('not_found', `No clinic with id ${input.clinicId}`, { field: 'clinic' });
    if (clinic.sandbox_of !== null) throw sandboxRefusal(clinic, 'it has no keys of its own: create a test key of its clinic');
    const mode = input.mode ?? 'live';
    if (mode === 'test' && !this.opts.sandboxFor)
      throw new DomainError('invalid_input', 'test keys are not available here', { field: 'mode' });
    if (!isApiEligible(clinic.plan, this.opts.apiPlans)) {
      throw new DomainError(
        'plan_not_eligible',
        `Clinic plan "${clinic.plan}" does not include API access; eligible plans: ${this.opts.apiPlans.join(', ')}`,
      );
    }
    const key = generateKey(this.opts.prefix, mode);
    const id = randomUUID();
    const row = this.newRow(id, key, clinic.id, {
      mode,
      name,
      scopes,
      allowedIps,
      expiresAt: input.expiresAt,
      createdBy: input.createdBy,
      createdAt,
    });
    await whenWritable(() => insertApiKey(this.db, row), INTERACTIVE_WRITE_WAIT_MS);
    // The sandbox is made with the first test key, so its first request finds data there.
    if (mode === 'test') await this.opts.sandboxFor!(clinic.id);
    return { id, mode, key, hint: keyHint(key), name, clinicId: clinic.id, expiresAt: input.expiresAt, createdAt, scopes, allowedIps };
  }

  private newRow(
    id: string,
    key: string,
    clinicId: string,
    k: {
      mode: KeyMode;
      name: string;
      scopes: Scope[];
      allowedIps: string[] | null;
      expiresAt: number | null;
      createdBy: string | null;
      createdAt: number;
    },
  ): ApiKeyRow {
    return {
      id,
      clinic_id: clinicId,
      name: k.name,
      key_hash: hashKey(this.opts.pepper, key),
      hint: keyHint(key),
      created_by: k.createdBy,
      created_at: k.createdAt,
      expires_at: k.expiresAt,
      revoked_at: null,
      last_used_at: null,
      scopes: storedScopes(k.scopes),
      allowed_ips: storedAllowedIps(k.allowedIps),
      replaced_by: null,
      mode: k.mode,
    };
  }

  list(clinicId: string): Promise<ApiKeyListing[]> {
    return listApiKeys(this.db, clinicId);
  }

  /** The clinic's key `keyId`; undefined when it does not exist or belongs to another clinic. */
  get(clinicId: string, keyId: string) {
    return getApiKey(this.db, clinicId, keyId);
  }

  /**
   * Operator-scoped, across clinics: the clinic key `keyId` belongs to, for an operator who names
   * a key and no clinic (the CLI's `keys revoke KEY_ID`). Never for a request of a clinic's user.
   */
  locateKey(keyId: string): Promise<string | undefined> {
    return locateApiKey(this.db, keyId);
  }

  /**
   * Revokes the clinic's key and evicts it from this instance's cache. Returns false if it is
   * unknown, another clinic's, or already revoked.
   */
  async revoke(clinicId: string, keyId: string): Promise<boolean> {
    return (await this.revokeEverywhere(clinicId, keyId))?.revoked ?? false;
  }

  /**
   * revoke(), saying whether the other instances were told at once; undefined when the key is
   * unknown or another clinic's.
   */
  async revokeEverywhere(clinicId: string, keyId: string): Promise<RevokeOutcome | undefined> {
    const at = Math.floor(this.now() / 1000);
    // The keys it replaced that still work go with it: a key is rolled because it leaked, and
    // revoking its replacement must not leave the leaked one working until its overlap ends.
    // Revoking such an old key alone is allowed (it ends its overlap early). One transaction.
    const { done, followers } = await whenWritable(
      () =>
        this.db.transaction().execute(async (trx) => {
          const done = await revokeApiKey(trx, clinicId, keyId, at);
          const followers = await livePredecessors(trx, clinicId, keyId, at, ROLL_OVERLAP.maxS);
          await revokeFollowers(trx, clinicId, followers, at);
          // Their webhook endpoints stop with them: a key is revoked because it leaked, and an
          // endpoint it subscribed would go on receiving the clinic's events. Not when a rolled key is
          // revoked alone: its replacement lives on and takes them over (the maintenance pass).
          const rolled = (await getApiKey(trx, clinicId, keyId))?.replaced_by != null;
          if (!rolled) await disableEndpointsOfCredentials(trx, clinicId, 'created_by_key', [keyId, ...followers], 'key_revoked', at);
          return { done, followers };
        }),
      INTERACTIVE_WRITE_WAIT_MS,
    );
    // Revoked already (e.g. through the CLI) is still evicted here; another clinic's key is left alone.
    if (!done && !(await getApiKey(this.db, clinicId, keyId))) return undefined;
    return { revoked: done, followers, announced: await this.changedAllEverywhere([keyId, ...followers]) };
  }

  /**
   * Keys deleted with their clinic (services/clinic-deletion.ts): evicted here and announced like
   * any change of a key; whether every one was announced (false: no REDIS_URL, or Redis did not answer).
   */
  async forgetEverywhere(keyIds: readonly string[]): Promise<boolean> {
    return keyIds.length > 0 && (await this.changedAllEverywhere(keyIds));
  }

  /**
   * Renames a live key or changes its scopes or addresses (only what `changes` gives), then
   * evicts it here and announces it, like a revocation: the next request anywhere reads the new
   * state. The keys it replaced that are still in their roll's overlap get the same change (a
   * narrowed key must not leave the old one wider); a rolled key is not changed on its own, it
   * follows its replacement (conflict, naming it). undefined when the key is unknown or another
   * clinic's; a revoked key cannot be changed (conflict).
   */
  async update(clinicId: string, keyId: string, changes: KeyChanges): Promise<UpdateOutcome | undefined> {
    const set: ApiKeyChanges = {};
    if (changes.name !== undefined) set.name = checkedName(changes.name);
    if (changes.scopes !== undefined) set.scopes = storedScopes(checkedScopes(changes.scopes));
    if (changes.allowedIps !== undefined) set.allowed_ips = storedAllowedIps(changes.allowedIps);
    const existing = await getApiKey(this.db, clinicId, keyId);
    if (!existing) return undefined;
    const nowS = Math.floor(this.now() / 1000);
    const followers = await whenWritable(
      () =>
        this.db.transaction().execute(async (trx) => {
          if (!(await updateApiKey(trx, clinicId, keyId, set))) return null;
          const followers = await livePredecessors(trx, clinicId, keyId, nowS, ROLL_OVERLAP.maxS);
          await updateFollowers(trx, clinicId, followers, set);
          return followers;
        }),
      INTERACTIVE_WRITE_WAIT_MS,
    );
    if (followers === null) {
      const now = await getApiKey(this.db, clinicId, keyId);
      if (now && now.revoked_at === null && now.replaced_by !== null)
        throw new DomainError(
          'conflict',
          `key ${keyId} was rolled: until it ends it has the scopes and addresses of its replacement, key ${now.replaced_by}; ` +
            'change that one, or revoke this one to end it now',
          { field: 'key-id' },
        );
      throw new DomainError('conflict', `key ${keyId} is revoked: a revoked key cannot be changed`, { field: 'key-id' });
    }
    const key = (await getApiKey(this.db, clinicId, keyId))!;
    return { key, followers, announced: await this.changedAllEverywhere([keyId, ...followers]) };
  }

  /**
   * Replaces a live key by a new one with the same name, scopes and addresses (and, if it
   * expires, the same lifetime from now), shown once; the old key keeps working for
   * `overlapS` seconds (0 to 7 days), then expires (earlier if it was due to). A key is rolled
   * once: rolling its replacement is how to roll again. undefined when the key is unknown or
   * another clinic's; a revoked, expired or already rolled key is a conflict.
   */
  async roll(clinicId: string, keyId: string, overlapS: number, createdBy: string | null): Promise<RollOutcome | undefined> {
    if (!Number.isInteger(overlapS) || overlapS < 0 || overlapS > ROLL_OVERLAP.maxS)
      throw invalid('overlap', `the overlap must be from 0 to 7 days (168h), got ${overlapS} seconds`);
    const old = await getApiKey(this.db, clinicId, keyId);
    if (!old) return undefined;
    const nowS = Math.floor(this.now() / 1000);
    const refusal = rollRefusal(old, nowS);
    if (refusal) throw new DomainError('conflict', `key ${keyId} ${refusal}`, { field: 'key-id' });
    const clinic = await getClinic(this.db, clinicId);
    if (!clinic || !isApiEligible(clinic.plan, this.opts.apiPlans)) {
      throw new DomainError(
        'plan_not_eligible',
        `Clinic plan "${clinic?.plan}" does not include API access; eligible plans: ${this.opts.apiPlans.join(', ')}`,
      );
    }
    const mode = keyModeOf(old.mode);
    const key = generateKey(this.opts.prefix, mode);
    const id = randomUUID();
    const oldExpiresAt = old.expires_at === null ? nowS + overlapS : Math.min(old.expires_at, nowS + overlapS);
    // Retried whole while SQLite's write lock is taken (the transaction rolls back each time). The
    // new key copies the old one as read after the guarded UPDATE, inside the transaction, so an
    // edit of the old key that lands meanwhile is either in the copy or refused (a rolled key
    // is not edited on its own).
    const issued = await whenWritable(
      () =>
        this.db.transaction().execute(async (trx): Promise<IssuedKey | null> => {
          if (!(await markApiKeyReplaced(trx, clinicId, keyId, id, oldExpiresAt, nowS))) return null;
          const now = (await getApiKey(trx, clinicId, keyId))!;
          const scopes = readStoredScopes(now.scopes);
          const allowedIps = readStoredAllowedIps(now.allowed_ips);
          const expiresAt = old.expires_at === null ? null : nowS + Math.max(1, old.expires_at - old.created_at);
          await insertApiKey(
            trx,
            this.newRow(id, key, clinicId, { mode, name: now.name, scopes, allowedIps, expiresAt, createdBy, createdAt: nowS }),
          );
          return { id, mode, key, hint: keyHint(key), name: now.name, clinicId, expiresAt, createdAt: nowS, scopes, allowedIps };
        }),
      INTERACTIVE_WRITE_WAIT_MS,
    );
    if (!issued) {
      const now = await getApiKey(this.db, clinicId, keyId);
      throw new DomainError('conflict', `key ${keyId} ${(now && rollRefusal(now, nowS)) ?? 'changed meanwhile'}`, { field: 'key-id' });
    }
    return { issued, oldExpiresAt, announced: await this.changedEverywhere(keyId) };
  }

  /** Evicts `keyId` here and tells the other instances (with REDIS_URL); whether they were told. */
  private async changedEverywhere(keyId: string): Promise<boolean> {
    this.evict(keyId);
    return this.opts.announceChange ? this.opts.announceChange(keyId) : false;
  }

  /** changedEverywhere for each key; whether every one was announced. */
  private async changedAllEverywhere(keyIds: readonly string[]): Promise<boolean> {
    let announced = true;
    for (const keyId of keyIds) if (!(await this.changedEverywhere(keyId))) announced = false;
    return announced;
  }

  /**
   * Forgets `keyId` in this instance: drops it from the cache, so the next request reads it
   * again, and makes a look-up already in flight read it again too. For changes made here and
   * announced by other instances or the CLI; an unknown id costs nothing.
   */
  evict(keyId: string): void {
    const nowMs = this.now();
    for (const [id, c] of this.changed) if (nowMs - c.at > CHANGES_KEPT_MS) this.changed.delete(id);
    this.changed.set(keyId, { seq: ++this.changes, at: nowMs });
    for (const [k, entry] of this.cache) if (entry.key.keyId === keyId) this.cache.delete(k);
  }

  /**
   * Like verify(), but answers only from the in-process cache: undefined when the key is not
   * cached. Used for callers over their failed-authentication budget, so that they cost no
   * database work while keys already in use keep working.
   */
  verifyCached(token: string): AuthenticatedKey | null | undefined {
    if (!TOKEN_RE.test(token)) return null;
    const entry = this.cache.get(cacheKey(token));
    const nowMs = this.now();
    if (!entry || nowMs - entry.at > CACHE_TTL_MS) return undefined;
    return this.live(entry.key, nowMs);
  }

  /** The key's identity if `token` is a live key, else null. One shape of "no" for every reason. */
  async verify(token: string): Promise<AuthenticatedKey | null> {
    if (!TOKEN_RE.test(token)) return null;
    const cached = cacheKey(token);
    const nowMs = this.now();
    let entry = this.cache.get(cached);
    if (!entry || nowMs - entry.at > CACHE_TTL_MS) {
      const hash = hashKey(this.opts.pepper, token);
      let started = this.changes;
      let loaded = await this.load(hash);
      // Changed while it was read (revoked, edited, rolled): read again, never cache the old state.
      for (let again = 0; loaded && again < 3 && (this.changed.get(loaded.keyId)?.seq ?? 0) > started; again++) {
        started = this.changes;
        loaded = await this.load(hash);
      }
      if (!loaded) {
        this.cache.delete(cached);
        return null;
      }
      if (this.cache.size >= CACHE_MAX) this.cache.clear();
      entry = { key: loaded, at: nowMs };
      this.cache.set(cached, entry);
    }
    return this.live(entry.key, nowMs);
  }

  private live(k: AuthenticatedKey, nowMs: number): AuthenticatedKey | null {
    if (k.revoked || (k.expiresAt !== null && k.expiresAt * 1000 <= nowMs)) return null;
    this.markUsed(k.keyId, Math.floor(nowMs / 1000));
    return k;
  }

  private async load(hash: string): Promise<AuthenticatedKey | null> {
    const row = await findApiKeyByHash(this.db, hash);
    if (!row) return null;
    // The lookup was by hash; compare again in constant time so equality never short-circuits.
    const a = Buffer.from(row.key_hash, 'hex');
    const b = Buffer.from(hash, 'hex');
    if (a.length !== b.length || !timingSafeEqual(a, b)) return null;
    const clinic = await getClinic(this.db, row.clinic_id);
    if (!clinic) return null;
    if (keyModeOf(row.mode) === 'live') return authenticatedKey(row, clinic);
    // A test key reads its clinic's sandbox (made here on its first request): decided once, then cached with the key.
    if (!this.opts.sandboxFor) return null;
    return authenticatedKey(row, clinic, await this.opts.sandboxFor(row.clinic_id));
  }

  /** last_used_at is written at most once a minute per key, off the request's path. */
  private markUsed(keyId: string, nowS: number): void {
    const last = this.lastWritten.get(keyId);
    if (last !== undefined && nowS - last < LAST_USED_EVERY_S) return;
    this.lastWritten.set(keyId, nowS);
    // Skipped while another process holds SQLite's write lock: the key's next use a minute later writes it.
    runInBackground(
      'last_used_at',
      () => whenWritable(() => touchApiKeys(this.db, [keyId], nowS), BACKGROUND_WRITE_WAIT_MS),
      this.opts.onBackgroundError,
    );
  }
}
