// API keys: issue, verify, list, revoke. Only HMAC-SHA256(pepper, key) is stored, with a
// 4-character hint for display. Verification is on the hot path, so verified keys (and the
// clinic facts a request needs) are cached in process for a few seconds; revoking through this
// service evicts at once, and, with REDIS_URL, announces the revocation so that every instance
// evicts it at once too (services/revocations.ts); without Redis, or while it is down, other
// instances see it within the cache TTL (<= 5 s).
import { createHmac, hash as digest, randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';
import type { Kysely } from 'kysely';
import { whenWritable } from '../db/connect.js';
import type { DB } from '../db/schema.js';
import type { Plan } from '../domain/records.js';
import { DomainError } from '../errors.js';
import {
  findApiKeyByHash,
  getApiKey,
  insertApiKey,
  listApiKeys,
  locateApiKey,
  revokeApiKey,
  touchApiKeys,
  type ApiKeyListing,
} from '../repos/api-keys.js';
import { getClinic } from '../repos/clinics.js';
import { runInBackground, type BackgroundErrorHandler } from './background.js';
import { BACKGROUND_WRITE_WAIT_MS, INTERACTIVE_WRITE_WAIT_MS } from './write-lock.js';

export type { ApiKeyListing };

/** 32 bytes = 256 bits from the CSPRNG, base64url: 43 URL-safe characters. */
const SECRET_BYTES = 32;
const TOKEN_RE = /^[A-Za-z0-9_-]{8,256}$/;
const CACHE_TTL_MS = 4_000;
const CACHE_MAX = 10_000;
const LAST_USED_EVERY_S = 60;

export interface AuthenticatedKey {
  keyId: string;
  /** the key's name, created_at and the clinic's name: for GET /me, from the same cached look-up */
  keyName: string;
  createdAt: number;
  clinicId: string;
  clinicName: string;
  timezone: string;
  currency: string;
  expiresAt: number | null;
  revoked: boolean;
  /**
   * Set when the request came with an OAuth access token instead of a key (services/oauth/tokens.ts):
   * the app, its grant (the rate-limit bucket is the grant's: keyId is the grant id) and the
   * resource the token is bound to.
   */
  app?: { grantId: string; clientId: string; clientName: string; resource: string };
}

export interface IssuedKey {
  id: string;
  key: string;
  hint: string;
  name: string;
  clinicId: string;
  expiresAt: number | null;
  createdAt: number;
}

export function generateKey(prefix: string): string {
  return `${prefix}_${randomBytes(SECRET_BYTES).toString('base64url')}`;
}

export function hashKey(pepper: string, key: string): string {
  return createHmac('sha256', pepper).update(key).digest('hex');
}

/**
 * The in-process cache's key for a presented token: a one-call SHA-256, several times cheaper than
 * the keyed HMAC (a new Hmac object per call), which only a cache miss needs for the database
 * look-up. A digest of a 256-bit random secret reveals nothing of it; the raw token is never kept.
 */
function cacheKey(token: string): string {
  return digest('sha256', token, 'base64url');
}

export function keyHint(key: string): string {
  return key.slice(-4);
}

/**
 * Whether `value` has the shape of an API key (`<prefix>_<secret>`, any prefix), not of a key id:
 * an operator pasted the key itself where its id belongs (`keys revoke`).
 */
export function looksLikeApiKey(value: string): boolean {
  return /^[a-z][a-z0-9]{1,15}_[A-Za-z0-9_-]{20,}$/.test(value.trim());
}

export type KeyStatus = 'active' | 'revoked' | 'expired';

/** A listed key's state at `nowS` (epoch seconds). */
export function keyStatus(k: { revoked_at: number | null; expires_at: number | null }, nowS: number): KeyStatus {
  if (k.revoked_at !== null) return 'revoked';
  if (k.expires_at !== null && k.expires_at <= nowS) return 'expired';
  return 'active';
}

export function isApiEligible(plan: string, plans: readonly Plan[]): boolean {
  return (plans as readonly string[]).includes(plan);
}

export interface KeyServiceOptions {
  pepper: string;
  prefix: string;
  apiPlans: readonly Plan[];
  now?: () => number;
  onBackgroundError?: BackgroundErrorHandler;
  /**
   * Tells the other instances that `keyId` was revoked (REDIS_URL: services/revocations.ts);
   * resolves with whether it was announced, never rejects.
   */
  announceRevocation?: (keyId: string) => Promise<boolean>;
}

export interface RevokeOutcome {
  /** false: it was revoked already (it is evicted here all the same, and announced again) */
  revoked: boolean;
  /** whether every instance was told at once (false: no REDIS_URL, or Redis did not answer) */
  announced: boolean;
}

export class KeyService {
  private readonly cache = new Map<string, { key: AuthenticatedKey; at: number }>();
  private readonly lastWritten = new Map<string, number>();
  /** Keys revoked here, for longer than the cache lives: a lookup that was already in flight
   * when revoke() ran must not put the key back into the cache as live. */
  private readonly revokedHere = new Map<string, number>();
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

  async create(input: { clinicId: string; name: string; expiresAt: number | null; createdBy: string | null }): Promise<IssuedKey> {
    const name = input.name.trim();
    if (name.length < 1 || name.length > 100)
      throw new DomainError('invalid_input', 'The key name must be 1 to 100 characters', { field: 'name' });
    const clinic = await getClinic(this.db, input.clinicId);
    if (!clinic) throw new DomainError('not_found', `No clinic with id ${input.clinicId}`, { field: 'clinic' });
    if (!isApiEligible(clinic.plan, this.opts.apiPlans)) {
      throw new DomainError(
        'plan_not_eligible',
        `Clinic plan "${clinic.plan}" does not include API access; eligible plans: ${this.opts.apiPlans.join(', ')}`,
      );
    }
    const key = generateKey(this.opts.prefix);
    const createdAt = Math.floor(this.now() / 1000);
    const id = randomUUID();
    const row = {
      id,
      clinic_id: clinic.id,
      name,
      key_hash: hashKey(this.opts.pepper, key),
      hint: keyHint(key),
      created_by: input.createdBy,
      created_at: createdAt,
      expires_at: input.expiresAt,
      revoked_at: null,
      last_used_at: null,
    };
    await whenWritable(() => insertApiKey(this.db, row), INTERACTIVE_WRITE_WAIT_MS);
    return { id, key, hint: keyHint(key), name, clinicId: clinic.id, expiresAt: input.expiresAt, createdAt };
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
    const done = await whenWritable(() => revokeApiKey(this.db, clinicId, keyId, at), INTERACTIVE_WRITE_WAIT_MS);
    // Revoked already (e.g. through the CLI) is still evicted here; another clinic's key is left alone.
    if (!done && !(await getApiKey(this.db, clinicId, keyId))) return undefined;
    this.evict(keyId);
    const announced = this.opts.announceRevocation ? await this.opts.announceRevocation(keyId) : false;
    return { revoked: done, announced };
  }

  /**
   * Refuses `keyId` from now on in this instance: drops it from the cache, and keeps a lookup
   * already in flight from caching it as live again. For revocations made here and announced
   * by other instances or the CLI; revocation is final, so an unknown id costs nothing.
   */
  evict(keyId: string): void {
    const nowMs = this.now();
    for (const [id, at] of this.revokedHere) if (nowMs - at > 2 * CACHE_TTL_MS) this.revokedHere.delete(id);
    this.revokedHere.set(keyId, nowMs);
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
      const loaded = await this.load(hashKey(this.opts.pepper, token));
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
    if (k.revoked || this.revokedHere.has(k.keyId) || (k.expiresAt !== null && k.expiresAt * 1000 <= nowMs)) return null;
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
    return {
      keyId: row.id,
      keyName: row.name,
      createdAt: row.created_at,
      clinicId: row.clinic_id,
      clinicName: clinic.name,
      timezone: clinic.timezone,
      currency: clinic.currency,
      expiresAt: row.expires_at,
      revoked: row.revoked_at !== null,
    };
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
