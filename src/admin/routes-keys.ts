// Settings > API: list, create (the key is shown once), revoke (after a confirmation page);
// editing and rolling a key are routes-key-changes.ts. Owners manage their own clinic's keys,
// superadmins any clinic's; staff only look.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { DomainError } from '../errors.js';
import { listClinicOwnerEmails, listClinics, type Clinic } from '../services/accounts.js';
import { isApiEligible } from '../services/api-keys.js';
import { createdFlash } from '../services/sessions.js';
import { addDays, todayIn } from '../time.js';
import { canManageKeys, field, pageLang, sendPage, type AdminContext, type Viewer } from './context.js';
import type { PageHandlers } from './pages.js';
import { csrfToken } from './csrf.js';
import { actingClinic as acting, clinicUrl, notFound, viewerOf } from './guards.js';
import { Formatter } from './format.js';
import { asLang, messages } from './i18n.js';
import { blankKeyForm, readKeyForm, type KeyForm } from './key-input.js';
import { keyView, listedKey, manageableKey } from './key-views.js';
import { apiKeysPage } from './views/api-keys.js';
import { clinicsPage } from './views/clinics.js';
import { revokePage } from './views/revoke.js';

const USAGE_DAYS = 7;

export async function keyRoutes(app: PageHandlers, ctx: AdminContext) {
  const prefix = ctx.config.apiKeyPrefix;

  const listUrl = (v: Viewer, clinic: Clinic, path = '/dashboard/settings/api') => clinicUrl(v, clinic, path);
  const actingClinic = (req: FastifyRequest, v: Viewer, requested: string) => acting(ctx, req, v, requested);

  async function renderList(req: FastifyRequest, reply: FastifyReply, v: Viewer, clinic: Clinic, status: number, form: KeyForm | null) {
    const nowMs = ctx.now();
    req.lang = asLang(clinic.language);
    const t = messages(pageLang(req));
    // Taken (and cleared) only by this clinic's page: a superadmin who looks at another clinic
    // first still gets to see the key just created.
    const flash = form ? null : await ctx.sessions.takeFlash(v.token, v.flash, clinic.id);
    const today = todayIn(clinic.timezone, nowMs);
    const days = Array.from({ length: USAGE_DAYS }, (_, i) => addDays(today, i - (USAGE_DAYS - 1)));
    const canManage = canManageKeys(v, clinic.id);
    const [listing, usage, owners, clinics, sandboxId] = await Promise.all([
      ctx.keys.list(clinic.id),
      ctx.usage.summary(clinic.id, days),
      canManage ? Promise.resolve([]) : listClinicOwnerEmails(ctx.db, clinic.id),
      v.role === 'superadmin' ? listClinics(ctx.db) : Promise.resolve(null),
      ctx.sandboxes.find(clinic.id),
    ]);
    const page = apiKeysPage({
      t,
      fmt: new Formatter(t, clinic.timezone, nowMs),
      person: v,
      csrf: csrfToken(v.token),
      clinic,
      clinics,
      canManage,
      eligible: isApiEligible(clinic.plan, ctx.config.apiPlans),
      eligiblePlans: [...ctx.config.apiPlans],
      owners,
      keys: listing.map((k) => keyView(k, nowMs, clinic.timezone, listing)),
      usage,
      days,
      flash,
      form: form ?? blankKeyForm(),
      today,
      apiBase: `${req.protocol}://${req.host}/api/v1/`,
      // http/mcp/paths.ts's MCP_PATH (admin/ does not import http/; test/admin/keys.test.ts calls the URL shown)
      mcpUrl: `${req.protocol}://${req.host}/mcp`,
      keyPrefix: prefix,
      url: (p) => listUrl(v, clinic, p),
      sandbox: { exists: sandboxId !== null, reset: field(req.query, 'sandbox') === 'reset' },
    });
    return sendPage(reply, status, page);
  }

  app.get('/settings/api', async (req, reply) => {
    const v = viewerOf(req);
    const clinic = await actingClinic(req, v, field(req.query, 'clinic'));
    if (!clinic) {
      const t = messages(pageLang(req));
      return sendPage(reply, 200, clinicsPage({ t, person: v, csrf: csrfToken(v.token), clinics: await listClinics(ctx.db) }));
    }
    return renderList(req, reply, v, clinic, 200, null);
  });

  app.post('/settings/api/keys', async (req, reply) => {
    const v = viewerOf(req);
    const body = req.body;
    const clinic = await actingClinic(req, v, field(body, 'clinic'));
    if (!clinic) throw notFound();
    if (!canManageKeys(v, clinic.id)) throw new DomainError('forbidden', 'only owners and superadmins manage keys');
    if (!isApiEligible(clinic.plan, ctx.config.apiPlans))
      throw new DomainError('plan_not_eligible', `plan ${clinic.plan} has no API access`);

    const t = messages(pageLang(req));
    const { form, input } = readKeyForm(body, t, { timezone: clinic.timezone, nowMs: ctx.now() });
    if (!input) return renderList(req, reply, v, clinic, 400, form);
    try {
      const issued = await ctx.keys.create({ clinicId: clinic.id, createdBy: v.userId, ...input });
      await ctx.sessions.setFlash(v.token, createdFlash(issued));
      req.log.info({ clinic: clinic.id, key: issued.id, user: v.userId, scopes: issued.scopes }, 'dashboard: API key created');
    } catch (err) {
      // A plan that changed since the check above is a refusal page (errors.ts) like any other.
      if (err instanceof DomainError && err.reason === 'invalid_input' && err.details.field === 'name') {
        form.errors.name = t.nameInvalid;
        return renderList(req, reply, v, clinic, 400, form);
      }
      throw err;
    }
    // Post/redirect/get: the key is shown by the next GET, once; reloading shows only its hint.
    return reply.redirect(listUrl(v, clinic), 303);
  });

  // Test mode: a fresh sandbox (owners and superadmins; the CSRF token as every form).
  app.post('/settings/api/sandbox/reset', async (req, reply) => {
    const v = viewerOf(req);
    const clinic = await actingClinic(req, v, field(req.query, 'clinic') || field(req.body, 'clinic'));
    if (!clinic) throw notFound();
    if (!canManageKeys(v, clinic.id)) throw new DomainError('forbidden', 'only owners and superadmins reset the sandbox');
    const out = await ctx.sandboxes.reset(clinic.id);
    req.log.info({ clinic: clinic.id, sandbox: out.sandboxId, user: v.userId }, 'dashboard: sandbox reset');
    const back = listUrl(v, clinic);
    return reply.redirect(`${back}${back.includes('?') ? '&' : '?'}sandbox=reset#sandbox`, 303);
  });

  app.get('/settings/api/keys/:id/revoke', async (req, reply) => {
    const v = viewerOf(req);
    const { key, clinic } = await manageableKey(ctx, req, v);
    if (key.revoked_at !== null) return reply.redirect(listUrl(v, clinic), 303);
    const nowMs = ctx.now();
    const view = await listedKey(ctx, clinic.id, key.id, nowMs, clinic.timezone);
    const t = messages(pageLang(req));
    return sendPage(
      reply,
      200,
      revokePage({
        t,
        fmt: new Formatter(t, clinic.timezone, nowMs),
        person: v,
        csrf: csrfToken(v.token),
        clinic,
        key: view,
        keyPrefix: prefix,
        action: listUrl(v, clinic, `/dashboard/settings/api/keys/${key.id}/revoke`),
        cancel: listUrl(v, clinic),
      }),
    );
  });

  app.post('/settings/api/keys/:id/revoke', async (req, reply) => {
    const v = viewerOf(req);
    const { key, clinic } = await manageableKey(ctx, req, v);
    // KeyService.revoke evicts the key from this instance's cache: refused from the next request.
    if (await ctx.keys.revoke(clinic.id, key.id)) {
      req.log.info({ clinic: clinic.id, key: key.id, user: v.userId }, 'dashboard: API key revoked');
    }
    await ctx.sessions.setFlash(v.token, { kind: 'revoked', clinicId: clinic.id, keyId: key.id, name: key.name });
    return reply.redirect(listUrl(v, clinic), 303);
  });
}
