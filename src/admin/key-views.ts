// What the key pages share: a listed key as the views show it (its status, permissions,
// addresses, whether it expires within 14 days, whether it was rolled), and the key named in a
// path, looked up in the clinic in view for someone who may manage it.
import type { FastifyRequest } from 'fastify';
import { readStoredAllowedIps } from '../domain/allowed-ips.js';
import { readStoredScopes } from '../domain/scopes.js';
import { DomainError } from '../errors.js';
import { keyModeOf, keyStatus, type ApiKeyListing } from '../services/api-keys.js';
import { localDate, todayIn } from '../time.js';
import { canManageKeys, field, type AdminContext, type Viewer } from './context.js';
import { actingClinic, ID_RE, notFound } from './guards.js';
import { asLang } from './i18n.js';
import type { KeyView } from './views/api-keys.js';

/** Keys that expire within this many days are marked in the list. */
export const EXPIRES_SOON_DAYS = 14;

const dayNumber = (day: string) => Date.parse(`${day}T00:00:00Z`) / 86_400_000;

/**
 * `k` as the views show it; `all`, the clinic's keys, tells whether it replaced a key still in
 * its overlap (and when that one ends).
 */
export function keyView(k: ApiKeyListing, nowMs: number, timezone: string, all: readonly ApiKeyListing[]): KeyView {
  const nowS = Math.floor(nowMs / 1000);
  const status = keyStatus(k, nowS);
  const followers = all.filter((o) => o.replaced_by === k.id && keyStatus(o, nowS) === 'active' && o.expires_at !== null);
  const expiresAt = k.expires_at === null ? null : Number(k.expires_at);
  // Calendar days in the clinic's zone to the last day it works: 0 is "today".
  const daysLeft = expiresAt === null ? null : dayNumber(localDate(expiresAt - 1, timezone)) - dayNumber(todayIn(timezone, nowMs));
  return {
    id: k.id,
    name: k.name,
    hint: k.hint,
    createdByEmail: k.created_by_email,
    createdAt: Number(k.created_at),
    lastUsedAt: k.last_used_at === null ? null : Number(k.last_used_at),
    expiresAt,
    status,
    scopes: readStoredScopes(k.scopes),
    allowedIps: readStoredAllowedIps(k.allowed_ips),
    expiresInDays: status === 'active' && daysLeft !== null && daysLeft <= EXPIRES_SOON_DAYS ? Math.max(0, daysLeft) : null,
    replacedBy: k.replaced_by,
    mode: keyModeOf(k.mode),
    replacesUntil: status === 'active' && followers.length ? Math.max(...followers.map((o) => Number(o.expires_at))) : null,
  };
}

/**
 * The key named in the path, looked up in the clinic in view (the viewer's own, or the one a
 * superadmin's links name), so another clinic's key is not found; only owners and superadmins may act.
 */
export async function manageableKey(ctx: AdminContext, req: FastifyRequest, v: Viewer) {
  const clinic = await actingClinic(ctx, req, v, field(req.query, 'clinic'));
  if (!clinic) throw notFound();
  const id = (req.params as { id: string }).id;
  const key = ID_RE.test(id) ? await ctx.keys.get(clinic.id, id) : undefined;
  if (!key) throw notFound();
  req.lang = asLang(clinic.language);
  if (!canManageKeys(v, clinic.id)) throw new DomainError('forbidden', 'only owners and superadmins manage keys');
  return { key, clinic };
}

/** The key `keyId` as the views show it (with who created it, and the key it replaced), or a 404. */
export async function listedKey(ctx: AdminContext, clinicId: string, keyId: string, nowMs: number, timezone: string): Promise<KeyView> {
  const all = await ctx.keys.list(clinicId);
  const listing = all.find((k) => k.id === keyId);
  if (!listing) throw notFound();
  return keyView(listing, nowMs, timezone, all);
}
