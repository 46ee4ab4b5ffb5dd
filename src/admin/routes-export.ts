// Settings > API > Export: the whole clinic's export, made in the background (services/exports/
// jobs.ts) and offered for 24 hours. Owners of the clinic only: a superadmin or staff member gets
// the refusal page, and the file's link answers 404 to anyone but a signed-in owner of that
// clinic (another clinic's export, an expired one and an unknown id alike).
import { Readable } from 'node:stream';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { field, pageLang, sendPage, type AdminContext, type Viewer } from './context.js';
import type { PageHandlers } from './pages.js';
import { csrfToken } from './csrf.js';
import { Formatter } from './format.js';
import { notFound, viewerOf } from './guards.js';
import { messages } from './i18n.js';
import { exportMessages } from './locales/export-messages.js';
import { EXPORT_BASE, exportPage } from './views/export.js';
import { messagePage } from './views/message.js';

const ROUTE = '/settings/api/export';
const ID_RE = /^[0-9a-f-]{36}$/;

export async function exportRoutes(app: PageHandlers, ctx: AdminContext) {
  /** The owner's clinic, or the refusal page (null). */
  async function ownersClinic(req: FastifyRequest, reply: FastifyReply, v: Viewer) {
    const t = messages(pageLang(req));
    if (v.role !== 'owner' || !req.viewerClinic) {
      const csrf = csrfToken(v.token);
      await sendPage(
        reply,
        403,
        messagePage({
          t,
          title: t.forbiddenTitle,
          text: exportMessages(t.htmlLang).ownerOnly,
          person: v,
          csrf,
          tone: 'warning',
          here: '/dashboard',
        }),
      );
      return null;
    }
    return { t, clinic: req.viewerClinic };
  }

  app.get(ROUTE, async (req, reply) => {
    const v = viewerOf(req);
    const c = await ownersClinic(req, reply, v);
    if (!c) return reply;
    return sendPage(
      reply,
      200,
      exportPage({
        t: c.t,
        fmt: new Formatter(c.t, c.clinic.timezone, ctx.now()),
        person: v,
        csrf: csrfToken(v.token),
        clinic: c.clinic,
        exports: await ctx.exports.list(c.clinic.id),
      }),
    );
  });

  app.post(ROUTE, async (req, reply) => {
    const v = viewerOf(req);
    const c = await ownersClinic(req, reply, v);
    if (!c) return reply;
    await ctx.exports.request(c.clinic.id, v.userId);
    return reply.redirect(EXPORT_BASE, 303);
  });

  app.get(`${ROUTE}/:id/file`, async (req, reply) => {
    const v = viewerOf(req);
    const id = field(req.params, 'id');
    const clinic = req.viewerClinic;
    if (v.role !== 'owner' || !clinic || !ID_RE.test(id)) throw notFound();
    const row = await ctx.exports.ready(clinic.id, id);
    if (!row) throw notFound();
    const day = new Date(row.requested_at).toISOString().slice(0, 10);
    return reply
      .type('application/zip')
      .header('content-length', String(row.bytes))
      .header('content-disposition', `attachment; filename="clinica-${day}.zip"`)
      .header('cache-control', 'no-store')
      .send(Readable.from(ctx.exports.file(row)));
  });
}
