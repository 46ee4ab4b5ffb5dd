// Strong ETags made without building the page: from the clinic's data version (one primary-key
// read), the request's parameters with their defaults resolved (listings.ts plans them against
// "now", so a default window carries the clinic's today), and what moves with time alone. A
// matching If-None-Match is answered 304 from these (http/conditional.ts); the 200 carries the
// same tag. Read before the page: a page is then never older than its tag, so a 304 can only
// answer "nothing changed since the page you have" (docs/architecture.md, "Conditional requests").
import { createHash, hash } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { CollectionName } from '../collections/index.js';
import type { DB } from '../db/schema.js';
import { API_COMPONENTS } from '../domain/api-schemas.js';
import { nextCitaStart, nextCitaStartOf } from '../repos/citas.js';
import { dataVersions } from '../repos/clinics.js';
import type { ClinicContext } from './shape.js';

/** The responses' shapes: a release that changes them changes every tag, so no 304 hides the new fields. */
const REPRESENTATION = createHash('sha256').update(JSON.stringify(API_COMPONENTS)).digest('base64url').slice(0, 12);

/**
 * A strong entity tag of `parts`: a quoted hash of them. SHA-1 (one call, no hash object: it is on
 * the path of every 304) is as good as any digest here: a tag only has to differ when its parts
 * do, and nobody gains by making two of one clinic's answers collide.
 */
export function strongEtag(parts: readonly (string | number | null)[]): string {
  return `"${hash('sha1', `${REPRESENTATION}\u0000${parts.join('\u0000')}`, 'base64url')}"`;
}

export type ListResource = CollectionName;

/** How a list page is written: the JSON of the schemas, or CSV (one tag per representation). */
export type ListFormat = 'json' | 'csv';

/**
 * The tag of a list page: the clinic (its zone and currency shape the page), its data version, the
 * planned parameters (`key`, the key's view included), the representation, and for clientas the next instant any of the
 * clinic's citas starts (ultima_cita of some client moves exactly then; one seek of citas_by_time).
 */
export async function listEtag(
  db: Kysely<DB>,
  ctx: ClinicContext,
  resource: ListResource,
  key: string,
  nowMs: number,
  format: ListFormat = 'json',
): Promise<string> {
  const nowSeconds = Math.floor(nowMs / 1000);
  const [v, next] = await Promise.all([
    dataVersions(db, ctx.clinicId),
    resource === 'clientas' ? nextCitaStart(db, ctx.clinicId, nowSeconds) : Promise.resolve(null),
  ]);
  return strongEtag([resource, ctx.clinicId, ctx.timezone, ctx.currency, v.data, key, format, next]);
}

/**
 * The tag of one record (GET /api/v1/citas/{id} ...): as a list's, from the clinic's data version
 * (every change of what the record shows, a cascade's included, bumps it), the id and the key's
 * view (`contact`: with contact details or without); for a clienta also the next start of one of
 * HER citas (her ultima_cita moves exactly then; one seek of citas_by_clienta). Made whether or
 * not the record exists: a 404 carries no tag.
 */
export async function recordEtag(
  db: Kysely<DB>,
  ctx: ClinicContext,
  resource: ListResource,
  id: string,
  nowMs: number,
  contact: boolean,
): Promise<string> {
  const nowSeconds = Math.floor(nowMs / 1000);
  const [v, next] = await Promise.all([
    dataVersions(db, ctx.clinicId),
    resource === 'clientas' ? nextCitaStartOf(db, ctx.clinicId, id, nowSeconds) : Promise.resolve(null),
  ]);
  return strongEtag([`${resource}/{id}`, ctx.clinicId, ctx.timezone, ctx.currency, v.data, id, next, contact ? 'contact' : 'no-contact']);
}
