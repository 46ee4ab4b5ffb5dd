// The OAuth pages of the dashboard: the consent page of an app's "Connect" (OAUTH_ISSUER set), and
// Settings > API > Connected apps (the grants, Disconnect). Consent is for a clinic's owner or a
// superadmin (who picks the clinic); staff cannot grant. The authorization server
// (services/oauth/server.ts) sends every authorization request here with ?uid=, its interaction
// cookie tells which request it is, and the answer goes back to it (allow/deny), which redirects
// the browser to the app. Every form carries the CSRF token, as everywhere in the dashboard.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { isScope, type Scope } from '../domain/scopes.js';
import { DomainError } from '../errors.js';
import { listClinics, type Clinic } from '../services/accounts.js';
import { isApiEligible } from '../services/api-keys.js';
import type { AuthorizationServer } from '../services/oauth/server.js';
import { canManageKeys, field, pageLang, sendPage, type AdminContext, type Viewer } from './context.js';
import type { PageHandlers } from './pages.js';
import { csrfToken } from './csrf.js';
import { Formatter } from './format.js';
import { actingClinic, clinicUrl, ID_RE, notFound, viewerOf } from './guards.js';
import { asLang, messages } from './i18n.js';
import { oauthMessages } from './locales/oauth-messages.js';
import { appsPage, disconnectPage } from './views/apps.js';
import { clinicsPage } from './views/clinics.js';
import { consentPage } from './views/consent.js';
import { messagePage } from './views/message.js';

/** The consent page's address (the authorization server sends the browser here). */
export const CONSENT_ROUTE = '/oauth/consent';
const UID_RE = /^[A-Za-z0-9_-]{1,100}$/;

/** Where sign-in may send someone back to: the consent page of one request, nothing else (no open redirect). */
export function safeNext(next: string): string | null {
  return /^\/dashboard\/oauth\/consent\?uid=[A-Za-z0-9_-]{1,100}$/.test(next) ? next : null;
}

/** The form's scope checkboxes: one value or several. */
function formScopes(body: unknown): Scope[] {
  const v = body && typeof body === 'object' ? (body as Record<string, unknown>).scope : undefined;
  const list = Array.isArray(v) ? v : typeof v === 'string' ? [v] : [];
  return list.filter((s): s is Scope => typeof s === 'string' && isScope(s));
}

export async function oauthRoutes(app: PageHandlers, ctx: AdminContext) {
  function server(): AuthorizationServer {
    if (!ctx.oauth) throw new DomainError('not_found', 'OAuth is not enabled on this server (OAUTH_ISSUER)');
    return ctx.oauth;
  }

  /** The clinics this person may connect an app to: an owner's own (if its plan has the API), any eligible one for a superadmin. */
  async function connectable(req: FastifyRequest, v: Viewer): Promise<Clinic[]> {
    if (v.role === 'staff') throw new DomainError('forbidden', 'staff cannot connect apps');
    const all = v.role === 'superadmin' ? await listClinics(ctx.db) : req.viewerClinic ? [req.viewerClinic] : [];
    const eligible = all.filter((c) => isApiEligible(c.plan, ctx.config.apiPlans));
    if (eligible.length === 0) throw new DomainError('plan_not_eligible', 'no clinic with API access');
    return eligible;
  }

  /**
   * Staff cannot grant: they get the consent page's own refusal (ask the owner), not the
   * dashboard's generic one, which speaks of API keys. The request stays open for the owner.
   */
  function staffRefusal(req: FastifyRequest, reply: FastifyReply, v: Viewer) {
    if (req.viewerClinic) req.lang = asLang(req.viewerClinic.language);
    const t = messages(pageLang(req));
    const text = oauthMessages(t.htmlLang).consentStaff;
    return sendPage(reply, 403, messagePage({ t, title: t.forbiddenTitle, text, person: v, csrf: csrfToken(v.token), tone: 'warning' }));
  }

  async function renderConsent(
    req: FastifyRequest,
    reply: FastifyReply,
    status: number,
    uid: string,
    checked: Scope[] | null,
    error: string | null,
  ) {
    const v = viewerOf(req);
    if (v.role === 'staff') return staffRefusal(req, reply, v);
    const clinics = await connectable(req, v);
    const asked = await server().interaction(req.raw, reply.raw, uid);
    // Said for one clinic (an owner's): a superadmin's list of every clinic is not searched for it.
    // The live connection: test mode is chosen on this page, and a test one is a connection of its own.
    const only = clinics.length === 1 ? clinics[0]! : null;
    const found = only
      ? await ctx.appGrants.connectionOf({
          clinicId: only.id,
          clientId: asked.clientId,
          resource: asked.resource,
          grantedBy: v.userId,
          mode: 'live',
        })
      : undefined;
    const connected = only && found ? [{ clinic: only.name, scopes: found.scopes }] : [];
    if (req.viewerClinic) req.lang = asLang(req.viewerClinic.language);
    const t = messages(pageLang(req));
    // The form's answer is a redirect to the app: the browser must be allowed to follow it there.
    const redirectOrigin = URL.canParse(asked.redirectUri) ? new URL(asked.redirectUri).origin : '';
    const csp = String(reply.getHeader('content-security-policy') ?? '');
    reply.header('content-security-policy', csp.replace("form-action 'self'", `form-action 'self' ${redirectOrigin}`.trim()));
    return sendPage(
      reply,
      status,
      consentPage({
        t,
        o: oauthMessages(t.htmlLang),
        person: v,
        csrf: csrfToken(v.token),
        uid: asked.uid,
        clientName: asked.clientName,
        documentHost: asked.documentHost,
        redirectHost: asked.redirectHost,
        clinics,
        scopes: asked.scopes,
        checked: checked ?? asked.scopes,
        connected,
        error,
        here: `/dashboard${CONSENT_ROUTE}?uid=${asked.uid}`,
      }),
    );
  }

  app.get(CONSENT_ROUTE, async (req, reply) => {
    server();
    const uid = field(req.query, 'uid');
    if (!UID_RE.test(uid)) throw new DomainError('not_found', 'no such authorization request');
    if (!req.viewer) {
      const lang = pageLang(req);
      return reply.redirect(`/dashboard/sign-in?lang=${lang}&next=${encodeURIComponent(`/dashboard${CONSENT_ROUTE}?uid=${uid}`)}`, 303);
    }
    return renderConsent(req, reply, 200, uid, null, null);
  });

  app.post(CONSENT_ROUTE, async (req, reply) => {
    const as = server();
    const v = viewerOf(req);
    const body = req.body;
    const uid = field(body, 'uid');
    if (!UID_RE.test(uid)) throw new DomainError('not_found', 'no such authorization request');
    if (v.role === 'staff') return staffRefusal(req, reply, v);
    if (field(body, 'action') === 'deny') return reply.redirect(await as.deny(req.raw, reply.raw, uid), 303);
    if (field(body, 'action') !== 'allow') throw new DomainError('invalid_input', 'answer with Allow or Deny', { field: 'action' });
    const clinics = await connectable(req, v);
    const clinicId = field(body, 'clinic');
    const clinic = ID_RE.test(clinicId) ? clinics.find((c) => c.id === clinicId) : undefined;
    if (!clinic) throw notFound();
    const scopes = formScopes(body);
    if (scopes.length === 0) {
      const o = oauthMessages(pageLang(req));
      return renderConsent(req, reply, 400, uid, [], o.consentNoScope);
    }
    // Test mode: the app reads the clinic's sandbox (made on its first request), like a test key.
    const mode = field(body, 'mode') === 'test' ? 'test' : 'live';
    const to = await as.allow(req.raw, reply.raw, uid, { userId: v.userId, clinicId: clinic.id, scopes, mode });
    req.log.info({ clinic: clinic.id, user: v.userId, mode }, 'dashboard: app connected (OAuth consent)');
    return reply.redirect(to, 303);
  });

  // Settings > API > Connected apps

  async function clinicInView(req: FastifyRequest, v: Viewer, requested: string): Promise<Clinic | null> {
    return actingClinic(ctx, req, v, requested);
  }

  app.get('/settings/api/apps', async (req, reply) => {
    const v = viewerOf(req);
    const clinic = await clinicInView(req, v, field(req.query, 'clinic'));
    const t = messages(pageLang(req));
    if (!clinic) return sendPage(reply, 200, clinicsPage({ t, person: v, csrf: csrfToken(v.token), clinics: await listClinics(ctx.db) }));
    req.lang = asLang(clinic.language);
    const lt = messages(pageLang(req));
    const nowMs = ctx.now();
    const flash = await ctx.sessions.takeFlash(v.token, v.flash, clinic.id);
    return sendPage(
      reply,
      200,
      appsPage({
        t: lt,
        o: oauthMessages(lt.htmlLang),
        fmt: new Formatter(lt, clinic.timezone, nowMs),
        person: v,
        csrf: csrfToken(v.token),
        clinic,
        canManage: canManageKeys(v, clinic.id),
        grants: await ctx.appGrants.list(clinic.id),
        oauthOn: ctx.oauth !== null,
        flash,
        url: (p) => clinicUrl(v, clinic, p),
      }),
    );
  });

  async function manageableGrant(req: FastifyRequest, v: Viewer) {
    const clinic = await clinicInView(req, v, field(req.query, 'clinic'));
    if (!clinic) throw notFound();
    const id = (req.params as { id: string }).id;
    const grant = UID_RE.test(id) ? (await ctx.appGrants.list(clinic.id)).find((g) => g.id === id) : undefined;
    if (!grant) throw notFound();
    req.lang = asLang(clinic.language);
    if (!canManageKeys(v, clinic.id)) throw new DomainError('forbidden', 'only owners and superadmins disconnect apps');
    return { grant, clinic };
  }

  app.get('/settings/api/apps/:id/disconnect', async (req, reply) => {
    const v = viewerOf(req);
    const { grant, clinic } = await manageableGrant(req, v);
    const url = (p: string) => clinicUrl(v, clinic, p);
    if (grant.revoked_at !== null) return reply.redirect(url('/dashboard/settings/api/apps'), 303);
    const t = messages(pageLang(req));
    return sendPage(
      reply,
      200,
      disconnectPage({
        t,
        o: oauthMessages(t.htmlLang),
        fmt: new Formatter(t, clinic.timezone, ctx.now()),
        person: v,
        csrf: csrfToken(v.token),
        clinic,
        grant,
        action: url(`/dashboard/settings/api/apps/${grant.id}/disconnect`),
        cancel: url('/dashboard/settings/api/apps'),
      }),
    );
  });

  app.post('/settings/api/apps/:id/disconnect', async (req, reply) => {
    const v = viewerOf(req);
    const { grant, clinic } = await manageableGrant(req, v);
    const out = await ctx.appGrants.disconnect(clinic.id, grant.id);
    if (out?.revoked) req.log.info({ clinic: clinic.id, grant: grant.id, user: v.userId }, 'dashboard: app disconnected');
    await ctx.sessions.setFlash(v.token, { kind: 'app-disconnected', clinicId: clinic.id, grantId: grant.id, name: grant.client_name });
    return reply.redirect(clinicUrl(v, clinic, '/dashboard/settings/api/apps'), 303);
  });
}
