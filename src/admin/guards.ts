// What the Settings > API routes (keys and webhooks) check first: a signed-in viewer, a form
// from this origin with its CSRF token, and the clinic in view.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { DomainError } from '../errors.js';
import { getClinic, type Clinic } from '../services/accounts.js';
import { field, pageLang, type AdminContext, type Viewer } from './context.js';
import { csrfValid, CSRF_FIELD, sameOriginRequest } from './csrf.js';
import { asLang } from './i18n.js';

export const ID_RE = /^[A-Za-z0-9-]{1,64}$/;

/** Also for what exists but is not the viewer's to see: the page must not tell them apart. */
export const notFound = () => new DomainError('not_found', 'no such clinic or key here');

export function viewerOf(req: FastifyRequest): Viewer {
  // requireViewer runs first on every route that calls this.
  if (!req.viewer) throw new Error('dashboard route reached without a session');
  return req.viewer;
}

export async function requireViewer(req: FastifyRequest, reply: FastifyReply) {
  if (req.viewer) return;
  const lang = pageLang(req, asLang(field(req.query, 'lang')));
  return reply.redirect(`/dashboard/sign-in${req.sessionState === 'expired' ? `?expired=1&lang=${lang}` : ''}`, 303);
}

export async function requireCsrf(req: FastifyRequest) {
  if (!sameOriginRequest(req) || !csrfValid(req.viewer?.token, field(req.body, CSRF_FIELD)))
    throw new DomainError('csrf_failed', 'form refused (CSRF)');
}

/**
 * The clinic in view. Owners and staff always see their own (asking for another is a 404, as
 * if it did not exist); a superadmin names one, or gets null and the list to choose from. A
 * sandbox's id is not found: its keys, log and reset are its clinic's.
 */
export async function actingClinic(ctx: AdminContext, req: FastifyRequest, v: Viewer, requested: string): Promise<Clinic | null> {
  if (v.role === 'superadmin') {
    if (!requested) return null;
    const clinic = ID_RE.test(requested) ? await getClinic(ctx.db, requested) : undefined;
    // A sandbox (test mode) is shown with its clinic, never as a clinic of its own.
    if (!clinic || clinic.sandbox_of !== null) throw notFound();
    req.lang = asLang(clinic.language);
    return clinic;
  }
  const own = req.viewerClinic;
  if (!own || (requested && requested !== own.id)) throw notFound();
  return own;
}

/** A path of the clinic in view: with ?clinic= for a superadmin. */
export function clinicUrl(v: Viewer, clinic: Clinic, path: string): string {
  return v.role === 'superadmin' ? `${path}?clinic=${encodeURIComponent(clinic.id)}` : path;
}
