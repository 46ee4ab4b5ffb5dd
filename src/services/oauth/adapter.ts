// oidc-provider's storage (its Adapter interface) on our database, never holding an artifact's id
// in clear: for the opaque artifacts (access and refresh tokens, authorization codes, sessions,
// interactions) the id IS the secret, so rows are keyed by HMAC-SHA256(pepper, id) and the stored
// payload has its id (jti) removed; the presented id is put back on a find. A copy of the table
// therefore holds no usable token or code (test/oauth checks the stored rows).
//
// The provider calls AccessToken's revokeByGrantId whenever it ends a grant (the app revoked a
// token, a refresh token or code was used twice): that is where `onGrantRevoked` hears of it, while
// the provider still waits, so the API refuses the grant's tokens from the provider's answer on.
//
// An app whose client_id is a URL is not stored: its metadata document is its registration
// (client-documents.ts), fetched when the provider looks the client up.
//
// Expiry is on the provider's own clock (the wall clock: oidc-provider reads Date.now), stored as
// expires_at for the sweep and checked on every find.
import { createHmac } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.js';
import {
  consumeArtifact,
  destroyArtifact,
  destroyArtifactsOfGrant,
  findArtifact,
  findArtifactByUid,
  upsertArtifact,
  type OAuthArtifactRow,
} from '../../repos/oauth.js';
import { isClientIdUrl } from './client-documents.js';

/** The models whose payload names a grant (their rows go with it). */
const GRANTABLE = new Set(['AccessToken', 'AuthorizationCode', 'RefreshToken', 'DeviceCode', 'BackchannelAuthenticationRequest']);

export type Payload = Record<string, unknown>;

export interface AdapterOptions {
  pepper: string;
  /** the provider's clock (ms) */
  now: () => number;
  /** a grant ended by the flow (not by us): the API must refuse its tokens from now on */
  onGrantRevoked: (grantId: string) => Promise<void>;
  /** an app whose client_id is a URL: its metadata document (client-documents.ts), or a refusal thrown */
  clientDocument?: (id: string) => Promise<Payload>;
}

/** HMAC-SHA256(pepper, "oauth:" + id): the label keeps these hashes apart from API keys' hashes. */
export function artifactHash(pepper: string, id: string): string {
  return createHmac('sha256', pepper).update(`oauth:${id}`).digest('base64url');
}

/** A stored row as the provider wants it back, or undefined when it has expired. */
export function loadArtifact(row: OAuthArtifactRow | undefined, nowS: number, id?: string): Payload | undefined {
  if (!row) return undefined;
  if (row.expires_at !== null && Number(row.expires_at) <= nowS) return undefined;
  const payload = JSON.parse(row.payload) as Payload;
  if (id !== undefined && typeof payload.kind === 'string') payload.jti = id;
  if (row.consumed_at !== null) payload.consumed = Number(row.consumed_at);
  return payload;
}

/** The Adapter class oidc-provider instantiates once per model name. */
export function adapterClass(db: Kysely<DB>, opts: AdapterOptions) {
  const h = (id: string) => artifactHash(opts.pepper, id);
  const nowS = () => Math.floor(opts.now() / 1000);

  return class HashedAdapter {
    constructor(readonly name: string) {}

    async upsert(id: string, payload: Payload, expiresIn?: number): Promise<void> {
      const p: Payload = { ...payload };
      // For opaque tokens jti is the token itself: never stored.
      delete p.jti;
      // An interaction's copy of the session cookie's value: unused once stored, and a secret.
      if (this.name === 'Interaction' && p.session && typeof p.session === 'object') {
        const session = { ...(p.session as Payload) };
        delete session.cookie;
        p.session = session;
      }
      await upsertArtifact(db, {
        model: this.name,
        id_hash: h(id),
        payload: JSON.stringify(p),
        grant_id: GRANTABLE.has(this.name) && typeof p.grantId === 'string' ? p.grantId : null,
        uid_hash: typeof p.uid === 'string' ? h(p.uid) : null,
        expires_at: expiresIn ? nowS() + expiresIn : null,
        consumed_at: null,
      });
    }

    async find(id: string): Promise<Payload | undefined> {
      // Registered apps' ids are random strings; a URL is a client ID metadata document's.
      if (this.name === 'Client' && opts.clientDocument && isClientIdUrl(id)) return opts.clientDocument(id);
      return loadArtifact(await findArtifact(db, this.name, h(id)), nowS(), id);
    }

    /** The provider looks a session up by its uid only to read it; its id (the cookie) is not needed. */
    async findByUid(uid: string): Promise<Payload | undefined> {
      return loadArtifact(await findArtifactByUid(db, this.name, h(uid)), nowS());
    }

    async findByUserCode(): Promise<undefined> {
      return undefined; // no device flow
    }

    async consume(id: string): Promise<void> {
      await consumeArtifact(db, this.name, h(id), nowS());
    }

    async destroy(id: string): Promise<void> {
      await destroyArtifact(db, this.name, h(id));
    }

    async revokeByGrantId(grantId: string): Promise<void> {
      await destroyArtifactsOfGrant(db, grantId, this.name);
      if (this.name === 'AccessToken') await opts.onGrantRevoked(grantId);
    }
  };
}
