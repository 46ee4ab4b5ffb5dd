// Settings > API > Webhooks: list and add endpoints (the secret shown once), one endpoint with
// its recent deliveries, a test event, resend, disable/enable, delete (after a confirmation
// page). Owners manage their own clinic's endpoints, superadmins any clinic's; staff only look.
// A test event and a resend are one attempt each, made while the owner waits (at most 10 s),
// and the outcome is shown on the next page.
// Test mode: the clinic's sandbox (a clinic row of its own) has endpoints of its own, "test
// endpoints", which receive only the sandbox's events. They are listed apart, added with the
// form's "Test endpoint" choice (making the sandbox on first use) and managed on the same pages:
// an endpoint is looked up in the clinic in view and in its sandbox only, and every action names
// the endpoint's own clinic id. The 10-endpoint limit counts per clinic row: 10 live and 10 test.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { DomainError } from '../errors.js';
import type { Clinic } from '../services/accounts.js';
import { isApiEligible } from '../services/api-keys.js';
import { DestinationRefused } from '../services/webhooks/destination.js';
import type { EndpointRow } from '../services/webhooks/endpoints.js';
import type { Attempt } from '../services/webhooks/send.js';
import { canManageKeys, field, fields, pageLang, sendPage, type AdminContext, type Viewer } from './context.js';
import type { PageHandlers } from './pages.js';
import { csrfToken } from './csrf.js';
import { actingClinic, clinicUrl, ID_RE, notFound, viewerOf } from './guards.js';
import { Formatter } from './format.js';
import { asLang, messages } from './i18n.js';
import { labelOf, type Messages } from './locales/messages.js';
import { attemptPage, deleteEndpointPage, endpointPage, webhooksPage, type LogFilter, type WebhookForm } from './views/webhooks.js';
import { EVENT_TYPES } from '../collections/index.js';
import { parseBound } from '../services/request-log-read.js';

/** Attempts per page of the delivery log. */
const LOG_PAGE = 25;
const DATE_RE = /^\d{4}-\d{2}-\d{2}$/;

/** The log's filters from the page's query: anything unknown is no filter (a GET form, so a hand-edited URL shows everything). */
function readLogFilter(query: unknown): LogFilter {
  const outcome = field(query, 'outcome');
  const tipo = field(query, 'tipo');
  const since = field(query, 'since');
  const until = field(query, 'until');
  return {
    outcome: outcome === 'delivered' || outcome === 'failed' ? outcome : '',
    tipo: (EVENT_TYPES as readonly string[]).includes(tipo) || tipo === 'ping' ? tipo : '',
    since: DATE_RE.test(since) ? since : '',
    until: DATE_RE.test(until) ? until : '',
  };
}

/** The query of the log's page: the filters in the clinic's days, newest first, after `before` ("<at_ms>.<id>"). */
function logQuery(f: LogFilter, clinic: Clinic, endpoint: EndpointRow, before: string) {
  const bound = (name: 'since' | 'until', raw: string) => {
    if (raw === '') return undefined;
    try {
      return parseBound(name, raw, clinic.timezone);
    } catch {
      return undefined;
    }
  };
  const m = /^(\d{1,16})\.([A-Za-z0-9-]{1,64})$/.exec(before);
  return {
    clinicId: endpoint.clinic_id,
    endpointId: endpoint.id,
    outcome: f.outcome === '' ? undefined : (f.outcome as 'delivered' | 'failed'),
    tipo: f.tipo === '' ? undefined : f.tipo,
    sinceMs: bound('since', f.since),
    untilMs: bound('until', f.until),
    order: 'desc' as const,
    after: m ? { atMs: Number(m[1]), id: m[2]! } : undefined,
  };
}

/** `url` (which may carry ?clinic= already) with more query parameters, the empty ones left out. */
function withQuery(url: string, params: Record<string, string>): string {
  const qs = new URLSearchParams(Object.entries(params).filter(([, v]) => v !== '')).toString();
  return qs === '' ? url : `${url}${url.includes('?') ? '&' : '?'}${qs}`;
}

/** Links (absolute) and route paths (inside the dashboard's /dashboard prefix). */
const BASE = '/dashboard/settings/api/webhooks';
const ROUTE = '/settings/api/webhooks';

function attemptText(t: Messages, a: Attempt): string {
  return a.statusCode !== null ? `HTTP ${a.statusCode}` : (labelOf(t.wh.errors, a.error ?? '') ?? a.error ?? '?');
}

export async function webhookRoutes(app: PageHandlers, ctx: AdminContext) {
  function common(req: FastifyRequest, v: Viewer, clinic: Clinic) {
    req.lang = asLang(clinic.language);
    const t = messages(pageLang(req));
    return {
      t,
      fmt: new Formatter(t, clinic.timezone, ctx.now()),
      person: v,
      csrf: csrfToken(v.token),
      clinic,
      canManage: canManageKeys(v, clinic.id),
      url: (p: string) => clinicUrl(v, clinic, p),
    };
  }

  async function renderList(req: FastifyRequest, reply: FastifyReply, v: Viewer, clinic: Clinic, status: number, form: WebhookForm | null) {
    const c = common(req, v, clinic);
    const flash = form ? null : await ctx.sessions.takeFlash(v.token, v.flash, clinic.id);
    const sandboxId = await ctx.sandboxes.find(clinic.id);
    const [endpoints, testEndpoints] = await Promise.all([
      ctx.webhooks.list(clinic.id),
      sandboxId === null ? null : ctx.webhooks.list(sandboxId),
    ]);
    // Who subscribed each by API (at most 10 endpoints a clinic row: one read each, for the names shown).
    const all = [...endpoints, ...(testEndpoints ?? [])];
    const subscribers = new Map(await Promise.all(all.map(async (e) => [e.id, await ctx.webhooks.subscriber(e)] as const)));
    return sendPage(
      reply,
      status,
      webhooksPage({
        ...c,
        eligible: isApiEligible(clinic.plan, ctx.config.apiPlans),
        allowPrivate: ctx.webhooks.allowPrivate,
        eligiblePlans: [...ctx.config.apiPlans],
        endpoints,
        testEndpoints,
        subscribers,
        flash,
        form,
      }),
    );
  }

  /** The clinic in view, which a route that acts on it needs. */
  async function clinicOf(req: FastifyRequest, v: Viewer, requested: string): Promise<Clinic> {
    const clinic = await actingClinic(ctx, req, v, requested);
    if (!clinic) throw notFound();
    return clinic;
  }

  /**
   * The endpoint of the path in the clinic in view or in its sandbox (a test endpoint); another
   * clinic's, or another clinic's sandbox's, is not found. `manage`: only owners and superadmins.
   * Callers act with `endpoint.clinic_id`, the endpoint's own clinic row.
   */
  async function endpointOf(req: FastifyRequest, v: Viewer, manage: boolean): Promise<{ clinic: Clinic; endpoint: EndpointRow }> {
    const clinic = await clinicOf(req, v, field(req.query, 'clinic'));
    const id = (req.params as { id: string }).id;
    if (!ID_RE.test(id)) throw notFound();
    let endpoint = await ctx.webhooks.get(clinic.id, id);
    if (!endpoint) {
      const sandboxId = await ctx.sandboxes.find(clinic.id);
      endpoint = sandboxId === null ? undefined : await ctx.webhooks.get(sandboxId, id);
    }
    if (!endpoint) throw notFound();
    req.lang = asLang(clinic.language);
    if (manage && !canManageKeys(v, clinic.id)) throw new DomainError('forbidden', 'only owners and superadmins manage webhooks');
    return { clinic, endpoint };
  }

  app.get(ROUTE, async (req, reply) => {
    const v = viewerOf(req);
    const clinic = await actingClinic(ctx, req, v, field(req.query, 'clinic'));
    // A superadmin chooses a clinic on the keys page first.
    if (!clinic) return reply.redirect('/dashboard/settings/api', 303);
    return renderList(req, reply, v, clinic, 200, null);
  });

  app.post(ROUTE, async (req, reply) => {
    const v = viewerOf(req);
    const clinic = await clinicOf(req, v, field(req.body, 'clinic'));
    if (!canManageKeys(v, clinic.id)) throw new DomainError('forbidden', 'only owners and superadmins manage webhooks');
    if (!isApiEligible(clinic.plan, ctx.config.apiPlans))
      throw new DomainError('plan_not_eligible', `plan ${clinic.plan} has no API access`);
    const form: WebhookForm = {
      url: field(req.body, 'url').trim(),
      events: fields(req.body, 'events'),
      test: field(req.body, 'mode') === 'test',
      error: null,
    };
    try {
      // A test endpoint lives in the sandbox, made here on first use (as by the first test key).
      const target = form.test ? await ctx.sandboxes.ensure(clinic.id) : clinic.id;
      const { endpoint, secret } = await ctx.webhooks.create({
        clinicId: target,
        url: form.url,
        eventTypes: form.events,
        createdBy: v.userId,
      });
      await ctx.sessions.setFlash(v.token, {
        kind: 'webhook-created',
        clinicId: clinic.id,
        endpointId: endpoint.id,
        url: endpoint.url,
        secret,
      });
      req.log.info(
        { clinic: clinic.id, endpointClinic: endpoint.clinic_id, endpoint: endpoint.id, user: v.userId },
        'dashboard: webhook endpoint created',
      );
    } catch (err) {
      if (err instanceof DestinationRefused) form.error = err.refusal;
      else if (err instanceof DomainError && err.reason === 'invalid_input' && err.details.field === 'events') form.error = 'events';
      else if (err instanceof DomainError && err.reason === 'conflict') form.error = 'limit';
      else throw err;
      return renderList(req, reply, v, clinic, 400, form);
    }
    // Post/redirect/get: the secret is shown by the next GET, once.
    return reply.redirect(clinicUrl(v, clinic, BASE), 303);
  });

  app.get(`${ROUTE}/:id`, async (req, reply) => {
    const v = viewerOf(req);
    const { clinic, endpoint } = await endpointOf(req, v, false);
    const c = common(req, v, clinic);
    const filter = readLogFilter(req.query);
    const q = logQuery(filter, clinic, endpoint, field(req.query, 'before'));
    const [page, flash, subscriber] = await Promise.all([
      ctx.webhooks.deliveryLog({ ...q, limit: LOG_PAGE + 1 }),
      ctx.sessions.takeFlash(v.token, v.flash, clinic.id),
      ctx.webhooks.subscriber(endpoint),
    ]);
    const deliveries = page.slice(0, LOG_PAGE);
    const last = deliveries.at(-1);
    // The next page: the same filters, after the last attempt shown (its time and id).
    const older =
      page.length > LOG_PAGE && last ? withQuery(c.url(`${BASE}/${endpoint.id}`), { ...filter, before: `${last.at_ms}.${last.id}` }) : null;
    return sendPage(
      reply,
      200,
      endpointPage({ ...c, endpoint, deliveries, flash, subscriber, filter, older, logDays: ctx.config.webhooks.logDays }),
    );
  });

  app.get(`${ROUTE}/:id/deliveries/:delivery`, async (req, reply) => {
    const v = viewerOf(req);
    const { clinic, endpoint } = await endpointOf(req, v, false);
    const deliveryId = (req.params as { delivery: string }).delivery;
    const delivery = ID_RE.test(deliveryId) ? await ctx.webhooks.delivery(endpoint.clinic_id, deliveryId) : undefined;
    if (!delivery || delivery.endpoint_id !== endpoint.id) throw notFound();
    return sendPage(reply, 200, attemptPage({ ...common(req, v, clinic), endpoint, delivery }));
  });

  /** Runs an action on the endpoint, leaves its outcome for the next page and goes there. */
  async function act(
    req: FastifyRequest,
    reply: FastifyReply,
    run: (clinic: Clinic, e: EndpointRow, t: Messages) => Promise<{ ok: boolean; text: string; to?: string }>,
  ) {
    const v = viewerOf(req);
    const { clinic, endpoint } = await endpointOf(req, v, true);
    const t = messages(pageLang(req));
    const r = await run(clinic, endpoint, t);
    await ctx.sessions.setFlash(v.token, { kind: 'webhook-notice', clinicId: clinic.id, tone: r.ok ? 'success' : 'danger', text: r.text });
    return reply.redirect(clinicUrl(v, clinic, r.to ?? `${BASE}/${endpoint.id}`), 303);
  }

  app.post(`${ROUTE}/:id/test`, (req, reply) =>
    act(req, reply, async (clinic, e, t) => {
      const a = await ctx.webhooks.sendTest(e.clinic_id, e.id);
      return { ok: a.ok, text: a.ok ? t.wh.testDelivered(attemptText(t, a)) : t.wh.testFailed(attemptText(t, a)) };
    }),
  );

  app.post(`${ROUTE}/:id/deliveries/:delivery/resend`, (req, reply) =>
    act(req, reply, async (_clinic, e, t) => {
      const deliveryId = (req.params as { delivery: string }).delivery;
      const d = ID_RE.test(deliveryId) ? await ctx.webhooks.delivery(e.clinic_id, deliveryId) : undefined;
      if (!d || d.endpoint_id !== e.id) throw notFound();
      const a = await ctx.webhooks.resend(e.clinic_id, d.id);
      return { ok: a.ok, text: t.wh.resent(`${d.tipo}: ${attemptText(t, a)}`) };
    }),
  );

  for (const [action, enabled] of [
    ['enable', true],
    ['disable', false],
  ] as const) {
    app.post(`${ROUTE}/:id/${action}`, (req, reply) =>
      act(req, reply, async (clinic, e, t) => {
        await ctx.webhooks.setEnabled(e.clinic_id, e.id, enabled);
        req.log.info(
          { clinic: clinic.id, endpointClinic: e.clinic_id, endpoint: e.id, user: req.viewer?.userId },
          `dashboard: webhook endpoint ${action}d`,
        );
        return { ok: true, text: enabled ? t.wh.enabledNotice : t.wh.disabledNotice };
      }),
    );
  }

  app.get(`${ROUTE}/:id/delete`, async (req, reply) => {
    const v = viewerOf(req);
    const { clinic, endpoint } = await endpointOf(req, v, true);
    return sendPage(reply, 200, deleteEndpointPage({ ...common(req, v, clinic), endpoint }));
  });

  app.post(`${ROUTE}/:id/delete`, (req, reply) =>
    act(req, reply, async (clinic, e, t) => {
      await ctx.webhooks.delete(e.clinic_id, e.id);
      req.log.info(
        { clinic: clinic.id, endpointClinic: e.clinic_id, endpoint: e.id, user: req.viewer?.userId },
        'dashboard: webhook endpoint deleted',
      );
      return { ok: true, text: t.wh.deletedNotice(e.url), to: BASE };
    }),
  );
}
