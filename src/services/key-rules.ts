// What an API key is, as values and rules, without storage: its format, its keyed hash and hint,
// its status, the plan rule, the checks of a name and of scopes, the AuthenticatedKey a request
// carries (built from a stored row), and why a key cannot be rolled. KeyService (api-keys.ts)
// stores, caches and changes keys with these; other modules import them from there.
import { createHmac, hash as digest, randomBytes } from 'node:crypto';
import { AddressRules, readStoredAllowedIps } from '../domain/allowed-ips.js';
import type { Plan } from '../domain/records.js';
import { canonicalScopes, DEFAULT_SCOPES, readStoredScopes, SCOPES, scopeBits, type Scope, type ScopeBits } from '../domain/scopes.js';
import { DomainError } from '../errors.js';
import type { ApiKeyRow } from '../repos/api-keys.js';

/** 32 bytes = 256 bits from the CSPRNG, base64url: 43 URL-safe characters. */
const SECRET_BYTES = 32;

/** A roll's overlap: how long the old key keeps working (0 to 7 days; default 24 hours). */
export const ROLL_OVERLAP = { defaultS: 86_400, maxS: 7 * 86_400 } as const;

/**
 * What a request knows of its key: everything comes from the one cached look-up that
 * authenticated it (no database read of its own). The MCP server and OAuth tokens are meant to
 * produce the same shape, so the API's checks read nothing else.
 */
export interface AuthenticatedKey {
  keyId: string;
  /**
   * 'test': a test key (or an app connected in test mode) whose clinicId is its clinic's sandbox
   * (services/sandbox.ts); 'live': the clinic's own data. Decided once, when the key is looked up.
   */
  mode: KeyMode;
  /** the clinic the key (or grant) belongs to, where its usage is counted: clinicId itself for a live key */
  ownerClinicId: string;
  /** the key's name, created_at and the clinic's name: for GET /me, from the same cached look-up */
  keyName: string;
  createdAt: number;
  /** the clinic whose data the request reads: the key's own, or for a test key its sandbox */
  clinicId: string;
  clinicName: string;
  timezone: string;
  currency: string;
  expiresAt: number | null;
  revoked: boolean;
  /** what the key may read, in SCOPES order (GET /me lists them) */
  scopes: readonly Scope[];
  /** the same as bits, for the checks on the request's path (hasScope: one AND) */
  scopeBits: ScopeBits;
  /** the addresses the key may be used from, parsed once; null: any address */
  allowedIps: AddressRules | null;
  /**
   * Set when the request came with an OAuth access token instead of a key (services/oauth/tokens.ts):
   * the app, its grant (the rate-limit bucket is the grant's: keyId is the grant id) and the
   * resource the token is bound to.
   */
  app?: { grantId: string; clientId: string; clientName: string; resource: string };
}

/** A key's mode: live data, or the clinic's sandbox (`<prefix>_test_<secret>`). */
export type KeyMode = 'live' | 'test';

/** A stored mode as a KeyMode: anything but 'test' is live (every key made before test mode). */
export function keyModeOf(stored: string): KeyMode {
  return stored === 'test' ? 'test' : 'live';
}

export interface IssuedKey {
  id: string;
  mode: KeyMode;
  key: string;
  hint: string;
  name: string;
  clinicId: string;
  expiresAt: number | null;
  createdAt: number;
  scopes: Scope[];
  allowedIps: string[] | null;
}

export interface NewKey {
  clinicId: string;
  name: string;
  expiresAt: number | null;
  createdBy: string | null;
  /** 'test': a test key, which reads the clinic's sandbox (made on first use); default 'live' */
  mode?: KeyMode;
  /** default: all of them */
  scopes?: readonly Scope[];
  /** canonical entries (domain/allowed-ips.ts, checkAllowedIps); null or left out: any address */
  allowedIps?: readonly string[] | null;
}

/** An edit: only the fields given change. */
export interface KeyChanges {
  name?: string;
  scopes?: readonly Scope[];
  /** null: any address */
  allowedIps?: readonly string[] | null;
}

/** `<prefix>_<secret>`, or `<prefix>_test_<secret>` for a test key: the mode shows at a glance (and to secret scanners). */
export function generateKey(prefix: string, mode: KeyMode = 'live'): string {
  return `${prefix}_${mode === 'test' ? 'test_' : ''}${randomBytes(SECRET_BYTES).toString('base64url')}`;
}

export function hashKey(pepper: string, key: string): string {
  return createHmac('sha256', pepper).update(key).digest('hex');
}

/**
 * The in-process cache's key for a presented token: a one-call SHA-256, several times cheaper than
 * the keyed HMAC (a new Hmac object per call), which only a cache miss needs for the database
 * look-up. A digest of a 256-bit random secret reveals nothing of it; the raw token is never kept.
 */
export function cacheKey(token: string): string {
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

export const invalid = (field: string, message: string) => new DomainError('invalid_input', message, { field });

export function checkedName(raw: string): string {
  const name = raw.trim();
  if (name.length < 1 || name.length > 100) throw invalid('name', 'The key name must be 1 to 100 characters');
  return name;
}

export function checkedScopes(scopes: readonly Scope[] | undefined): Scope[] {
  if (scopes === undefined) return [...DEFAULT_SCOPES];
  const known = canonicalScopes(scopes.filter((s) => (SCOPES as readonly string[]).includes(s)));
  if (known.length !== scopes.length || known.length === 0) throw invalid('scopes', `scopes must be one or more of: ${SCOPES.join(', ')}`);
  return known;
}

/**
 * A key's state as the request's path needs it, from its row and its clinic's; `dataClinicId`:
 * the clinic whose data it reads (for a test key, the sandbox's id).
 */
export function authenticatedKey(
  row: ApiKeyRow,
  clinic: { name: string; timezone: string; currency: string },
  dataClinicId: string = row.clinic_id,
): AuthenticatedKey {
  const scopes = readStoredScopes(row.scopes);
  const ips = readStoredAllowedIps(row.allowed_ips);
  return {
    keyId: row.id,
    mode: keyModeOf(row.mode),
    ownerClinicId: row.clinic_id,
    keyName: row.name,
    createdAt: row.created_at,
    clinicId: dataClinicId,
    clinicName: clinic.name,
    timezone: clinic.timezone,
    currency: clinic.currency,
    expiresAt: row.expires_at,
    revoked: row.revoked_at !== null,
    scopes,
    scopeBits: scopeBits(scopes),
    allowedIps: ips === null ? null : new AddressRules(ips),
  };
}

/** Why a key cannot be rolled at `nowS`, or null. */
export function rollRefusal(k: ApiKeyRow, nowS: number): string | null {
  if (k.revoked_at !== null) return 'is revoked: create a new key instead';
  if (k.replaced_by !== null) return `was rolled already: roll its replacement, key ${k.replaced_by}`;
  if (k.expires_at !== null && k.expires_at <= nowS) return 'has expired: create a new key instead';
  return null;
}
