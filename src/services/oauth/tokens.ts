// Access tokens on the API's path: a presented OAuth access token becomes the same principal as
// an API key (AuthenticatedKey: clinic, scopes, rate-limit bucket, /me facts), so every check
// after authentication treats both alike. Verified tokens are cached in process for a few
// seconds (as keys are), so a request with a token costs no database read once cached; a grant
// revoked here is evicted at once, one revoked elsewhere is announced on Redis
// (services/key-changes.ts) or, without Redis, expires from the cache within its TTL (<= 5 s).
//
// A token is looked up by the keyed hash of its value in the authorization server's own storage
// (oauth_artifacts, written by adapter.ts), then its grant (oauth_grants) for the clinic and the
// scopes the owner granted. Tokens live on the provider's clock (the wall clock).
import { hash as digest } from 'node:crypto';
import type { Kysely } from 'kysely';
import { whenWritable } from '../../db/connect.js';
import type { DB } from '../../db/schema.js';
import { readStoredScopes, scopeBits, type Scope, type ScopeBits } from '../../domain/scopes.js';
import { findArtifact, findGrant, touchGrant } from '../../repos/oauth.js';
import { getClinic } from '../../repos/clinics.js';
import { keyModeOf, type AuthenticatedKey } from '../api-keys.js';
import { runInBackground, type BackgroundErrorHandler } from '../background.js';
import { BACKGROUND_WRITE_WAIT_MS } from '../write-lock.js';
import { artifactHash, loadArtifact } from './adapter.js';

/** oidc-provider's opaque tokens: 43 URL-safe characters (256 bits). */
const TOKEN_RE = /^[A-Za-z0-9_-]{43}$/;
const CACHE_TTL_MS = 4_000;
const CACHE_MAX = 10_000;
const LAST_USED_EVERY_S = 60;

/** What a request made with an access token knows of the app and its grant. */
export type AppGrantFacts = NonNullable<AuthenticatedKey['app']>;

/** The principal of a request made with an access token: a key's shape, plus the app. */
export type AppPrincipal = AuthenticatedKey & {
  app: AppGrantFacts;
  scopes: readonly Scope[];
  scopeBits: ScopeBits;
  allowedIps: null;
};

export function isTokenShaped(token: string): boolean {
  return TOKEN_RE.test(token);
}

export class AppTokens {
  private readonly cache = new Map<string, { principal: AppPrincipal; at: number }>();
  /** Grants revoked here, kept longer than the cache lives: a look-up in flight must not cache one as live. */
  private readonly revokedHere = new Map<string, number>();
  private readonly lastWritten = new Map<string, number>();

  constructor(
    private readonly db: Kysely<DB>,
    private readonly opts: {
      pepper: string;
      now: () => number;
      onBackgroundError?: BackgroundErrorHandler;
      /** the sandbox id of a live clinic, made on first use: what an app connected in test mode reads (unset: refused) */
      sandboxFor?: (clinicId: string) => Promise<string>;
    },
  ) {}

  /** Only the cache: undefined when the token is not cached (a caller over its failed-auth budget). */
  verifyCached(token: string): AppPrincipal | null | undefined {
    if (!TOKEN_RE.test(token)) return null;
    const entry = this.cache.get(digest('sha256', token, 'base64url'));
    const nowMs = this.opts.now();
    if (!entry || nowMs - entry.at > CACHE_TTL_MS) return undefined;
    return this.live(entry.principal, nowMs);
  }

  /** The token's principal if it is a live access token, else null (one "no" for every reason). */
  async verify(token: string): Promise<AppPrincipal | null> {
    if (!TOKEN_RE.test(token)) return null;
    const cached = digest('sha256', token, 'base64url');
    const nowMs = this.opts.now();
    let entry = this.cache.get(cached);
    if (!entry || nowMs - entry.at > CACHE_TTL_MS) {
      const loaded = await this.load(token, nowMs);
      if (!loaded) {
        this.cache.delete(cached);
        return null;
      }
      if (this.cache.size >= CACHE_MAX) this.cache.clear();
      entry = { principal: loaded, at: nowMs };
      this.cache.set(cached, entry);
    }
    return this.live(entry.principal, nowMs);
  }

  /** Refuses the grant's tokens in this instance from now on (revoked here, or announced). */
  evictGrant(grantId: string): void {
    const nowMs = this.opts.now();
    for (const [id, at] of this.revokedHere) if (nowMs - at > 2 * CACHE_TTL_MS) this.revokedHere.delete(id);
    this.revokedHere.set(grantId, nowMs);
    for (const [k, entry] of this.cache) if (entry.principal.app.grantId === grantId) this.cache.delete(k);
  }

  private live(p: AppPrincipal, nowMs: number): AppPrincipal | null {
    if (this.revokedHere.has(p.app.grantId) || (p.expiresAt !== null && p.expiresAt * 1000 <= nowMs)) return null;
    this.markUsed(p, Math.floor(nowMs / 1000));
    return p;
  }

  private async load(token: string, nowMs: number): Promise<AppPrincipal | null> {
    const nowS = Math.floor(nowMs / 1000);
    const at = loadArtifact(await findArtifact(this.db, 'AccessToken', artifactHash(this.opts.pepper, token)), nowS, token);
    if (!at || typeof at.grantId !== 'string' || typeof at.exp !== 'number' || at.exp <= nowS) return null;
    const grant = await findGrant(this.db, at.grantId);
    if (!grant || grant.revoked_at !== null) return null;
    const clinic = await getClinic(this.db, grant.clinic_id);
    if (!clinic) return null;
    // Never more than the grant holds, whatever the token says.
    const granted = new Set(readStoredScopes(grant.scopes));
    const scopes = readStoredScopes(typeof at.scope === 'string' ? at.scope : '').filter((s) => granted.has(s));
    const audience = typeof at.aud === 'string' ? at.aud : grant.resource;
    // A connection made in test mode reads the clinic's sandbox, like a test key.
    const mode = keyModeOf(grant.mode);
    if (mode === 'test' && !this.opts.sandboxFor) return null;
    return {
      keyId: grant.id,
      mode,
      ownerClinicId: grant.clinic_id,
      keyName: grant.client_name,
      createdAt: Number(grant.created_at),
      clinicId: mode === 'test' ? await this.opts.sandboxFor!(grant.clinic_id) : grant.clinic_id,
      clinicName: clinic.name,
      timezone: clinic.timezone,
      currency: clinic.currency,
      expiresAt: at.exp,
      revoked: false,
      scopes,
      scopeBits: scopeBits(scopes),
      allowedIps: null,
      app: { grantId: grant.id, clientId: grant.client_id, clientName: grant.client_name, resource: audience },
    };
  }

  /** last_used_at is written at most once a minute per grant, off the request's path. */
  private markUsed(p: AppPrincipal, nowS: number): void {
    const id = p.app.grantId;
    const last = this.lastWritten.get(id);
    if (last !== undefined && nowS - last < LAST_USED_EVERY_S) return;
    this.lastWritten.set(id, nowS);
    if (this.lastWritten.size > CACHE_MAX) this.lastWritten.clear();
    runInBackground(
      'oauth grant last_used_at',
      () => whenWritable(() => touchGrant(this.db, p.ownerClinicId, id, nowS), BACKGROUND_WRITE_WAIT_MS),
      this.opts.onBackgroundError,
    );
  }
}
