// Settings > API > Logs: the clinic's request log, one request, and the client access record
// (views/logs.ts). Owners see their clinic's, superadmins any clinic's; staff are refused (the log
// shows what every integration did and with whose data: it belongs with managing the keys). Every
// read takes the clinic in view: a request id or clienta of another clinic is simply not found.
// One request is addressed by its request id (the id the API returned, which an integrator
// quotes), never by the log's row number: those are numbered across every clinic, and their gaps
// would show how many requests the others made.
import { PassThrough } from 'node:stream';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { integrationNamesOf, requireExportableClienta, writeClientaExport } from '../services/exports/clienta.js';
import type { LogCursor, LogFilter } from '../services/request-log-read.js';
import type { Clinic } from '../services/accounts.js';
import { appsOfGrants, findApp, grantResourceKind, type ClinicApp } from '../services/app-log.js';
import {
  checkClientaId,
  clientaAccessPage,
  clientaName,
  findClientas,
  parseBound,
  recentRequests,
  requestsById,
} from '../services/request-log-read.js';
import { REQUEST_ID_RE } from '../domain/records.js';
import { canManageKeys, field, pageLang, sendPage, type AdminContext, type Viewer } from './context.js';
import type { PageHandlers } from './pages.js';
import { csrfToken } from './csrf.js';
import { Formatter } from './format.js';
import { actingClinic, notFound, viewerOf } from './guards.js';
import { asLang, messages } from './i18n.js';
import { STATUS_CLASSES, type StatusClass } from './locales/log-messages.js';
import { messagePage } from './views/message.js';
import { accessPage, detailPage, logsPage, type LogFilterForm } from './views/logs.js';

const ROUTE = '/settings/api/logs';
const PAGE = 50;
const MATCHES = 20;
const DATE_RE = /^\d{4}-\d{2}-\d{2}$/;
const LOG_ID_RE = /^[1-9]\d{0,15}$/;
/** At most this many requests on the page of one request id (a client that reuses its own id). */
const SAME_ID = 20;

/**
 * The filters of the form as typed, and the log's filter from those that can be used; `grantIds`:
 * the grants of the app chosen (null: any key or app).
 */
function readFilter(
  query: unknown,
  clinic: Clinic,
  keyIds: ReadonlySet<string>,
  apps: readonly ClinicApp[],
): { form: LogFilterForm; filter: LogFilter; grantIds: string[] | null; bad: boolean } {
  const form: LogFilterForm = {
    key: field(query, 'key'),
    app: field(query, 'app'),
    status: field(query, 'status'),
    endpoint: field(query, 'endpoint').trim(),
    mode: field(query, 'mode') === 'test' ? 'test' : '',
    request_id: field(query, 'request_id').trim(),
    since: field(query, 'since'),
    until: field(query, 'until'),
  };
  const filter: LogFilter = {};
  let grantIds: string[] | null = null;
  let bad = false;
  if (form.key) {
    if (keyIds.has(form.key)) filter.keyId = form.key;
    else bad = true;
  }
  // Only this clinic's apps: another clinic's client id is as unknown as a made-up one.
  if (form.app) {
    const found = findApp(apps, form.app);
    if (found) grantIds = found.grantIds;
    else bad = true;
  }
  if (form.status) {
    if ((STATUS_CLASSES as readonly string[]).includes(form.status)) filter.status = { class: Number((form.status as StatusClass)[0]) };
    else bad = true;
  }
  if (form.endpoint) {
    if (form.endpoint.startsWith('/') && form.endpoint.length <= 200) filter.path = form.endpoint;
    else bad = true;
  }
  if (form.request_id) {
    if (REQUEST_ID_RE.test(form.request_id)) filter.requestId = form.request_id;
    else bad = true;
  }
  for (const name of ['since', 'until'] as const) {
    const raw = form[name];
    if (!raw) continue;
    if (!DATE_RE.test(raw)) {
      bad = true;
      continue;
    }
    try {
      const ms = parseBound(name, raw, clinic.timezone);
      if (name === 'since') filter.sinceMs = ms;
      else filter.untilMs = ms;
    } catch {
      bad = true;
    }
  }
  return { form, filter, grantIds, bad };
}

/** `before=<at_ms>.<id>`: the last row of the page before (null: the first page). */
function readCursor(raw: string): LogCursor | null {
  const m = /^(\d{1,16})\.(\d{1,16})$/.exec(raw);
  return m ? { atMs: Number(m[1]), id: Number(m[2]) } : null;
}

export async function logRoutes(app: PageHandlers, ctx: AdminContext) {
  const search = ctx.clientasSearch;

  /** The clinic in view and what every page needs; staff get the refusal page instead (null). */
  async function common(req: FastifyRequest, reply: FastifyReply, v: Viewer) {
    const clinic = await actingClinic(ctx, req, v, field(req.query, 'clinic'));
    if (!clinic) {
      await reply.redirect('/dashboard/settings/api', 303);
      return null;
    }
    req.lang = asLang(clinic.language);
    const t = messages(pageLang(req));
    const csrf = csrfToken(v.token);
    if (!canManageKeys(v, clinic.id)) {
      await sendPage(
        reply,
        403,
        messagePage({ t, title: t.forbiddenTitle, text: t.logs.staffCannot, person: v, csrf, tone: 'warning', here: '/dashboard' }),
      );
      return null;
    }
    // Test mode: test keys' requests are the sandbox's (a clinic row of its own), shown apart;
    // null when the clinic has no sandbox yet (then there is nothing to show).
    const test = field(req.query, 'mode') === 'test';
    const logClinicId = test ? await ctx.sandboxes.find(clinic.id) : clinic.id;
    const keys = await ctx.keys.list(clinic.id);
    const keyNames = new Map(keys.filter((k) => (k.mode === 'test') === test).map((k) => [k.id, k.name]));
    // The apps the clinic connected (disconnected ones too: their requests stay in the log).
    const grants = await ctx.appGrants.list(clinic.id);
    const apps = appsOfGrants(grants);
    // Each grant by its app and its resource: a REST and an MCP connection of one app are told apart.
    const resource = { api: t.sandbox.resourceApi, mcp: t.sandbox.resourceMcp };
    const appNames = new Map(grants.map((g) => [g.id, `${g.client_name} (${resource[grantResourceKind(g.resource)]})`] as const));
    const link = (path: string, params: Record<string, string | null> = {}) => {
      const q = new URLSearchParams();
      if (v.role === 'superadmin') q.set('clinic', clinic.id);
      if (test) q.set('mode', 'test');
      for (const [k, val] of Object.entries(params)) if (val) q.set(k, val);
      const s = q.toString();
      return s ? `${path}?${s}` : path;
    };
    return {
      t,
      fmt: new Formatter(t, clinic.timezone, ctx.now()),
      person: v,
      csrf,
      clinic,
      link,
      keyNames,
      apps,
      appNames,
      test,
      logClinicId,
    };
  }

  app.get(ROUTE, async (req, reply) => {
    const c = await common(req, reply, viewerOf(req));
    if (!c) return reply;
    const { form, filter, grantIds, bad } = readFilter(req.query, c.clinic, new Set(c.keyNames.keys()), c.apps);
    const cursor = readCursor(field(req.query, 'before'));
    const rows = c.logClinicId === null ? [] : await recentRequests(ctx.db, c.logClinicId, { ...filter, grantIds }, cursor, PAGE + 1);
    const more = rows.length > PAGE;
    if (more) rows.length = PAGE;
    const last = rows[rows.length - 1];
    return sendPage(
      reply,
      200,
      logsPage({
        ...c,
        days: ctx.config.requestLogDays,
        form,
        badFilter: bad,
        rows,
        next: more && last ? `${last.at_ms}.${last.id}` : null,
        paged: cursor !== null,
      }),
    );
  });

  app.get(`${ROUTE}/access`, async (req, reply) => {
    const c = await common(req, reply, viewerOf(req));
    if (!c) return reply;
    const q = field(req.query, 'q').trim().slice(0, 100);
    const rawClienta = field(req.query, 'clienta');
    let clienta: { id: string; name: string | null } | null = null;
    if (rawClienta) {
      let id: string;
      try {
        id = checkClientaId(rawClienta);
      } catch {
        throw notFound();
      }
      clienta = { id, name: c.logClinicId === null ? null : await clientaName(ctx.db, c.logClinicId, id, ctx.now()) };
    }
    const logClinicId = c.logClinicId;
    const before = field(req.query, 'before');
    const afterId = LOG_ID_RE.test(before) ? Number(before) : null;
    const rows = clienta && logClinicId !== null ? await clientaAccessPage(ctx.db, logClinicId, clienta.id, afterId, PAGE + 1) : [];
    const more = rows.length > PAGE;
    if (more) rows.length = PAGE;
    const matches = q && logClinicId !== null ? await findClientas(ctx.db, search, logClinicId, q, MATCHES, ctx.now()) : null;
    return sendPage(reply, 200, accessPage({ ...c, q, matches, clienta, rows, next: more ? String(rows[rows.length - 1]!.id) : null }));
  });

  // The owner's button on her page: her data as a ZIP (GDPR arts. 15 and 20), made as it is sent.
  app.post(`${ROUTE}/access/export`, async (req, reply) => {
    const v = viewerOf(req);
    const clinic = await actingClinic(ctx, req, v, '');
    if (!clinic || v.role !== 'owner') throw notFound();
    let id: string;
    try {
      id = checkClientaId(field(req.body, 'clienta'));
    } catch {
      throw notFound();
    }
    await requireExportableClienta(ctx.db, clinic.id, id, ctx.now()).catch(() => {
      throw notFound();
    });
    const names = await integrationNamesOf(ctx.keys, ctx.appGrants, clinic.id);
    const body = new PassThrough();
    writeClientaExport(ctx.db, clinic, id, names, body, ctx.now()).catch((err: unknown) => body.destroy(err as Error));
    return reply
      .type('application/zip')
      .header('content-disposition', `attachment; filename="clienta-${id}.zip"`)
      .header('cache-control', 'no-store')
      .send(body);
  });

  app.get(`${ROUTE}/:id`, async (req, reply) => {
    const c = await common(req, reply, viewerOf(req));
    if (!c) return reply;
    const requestId = (req.params as { id: string }).id;
    const found =
      REQUEST_ID_RE.test(requestId) && c.logClinicId !== null ? await requestsById(ctx.db, c.logClinicId, requestId, SAME_ID) : [];
    if (found.length === 0) throw notFound();
    return sendPage(reply, 200, detailPage({ ...c, requestId, found }));
  });
}
