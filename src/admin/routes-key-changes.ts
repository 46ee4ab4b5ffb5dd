// Settings > API: editing a key (name, permissions, addresses) and rolling it (a new key like it,
// shown once; the old one works for the overlap chosen). Both take effect on this instance at
// once and are announced to the others (KeyService). Owners manage their own clinic's keys,
// superadmins any clinic's; a key no longer active goes back to the list.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Clinic } from '../services/accounts.js';
import { createdFlash } from '../services/sessions.js';
import { field, pageLang, sendPage, type AdminContext, type Viewer } from './context.js';
import type { PageHandlers } from './pages.js';
import { csrfToken } from './csrf.js';
import { Formatter } from './format.js';
import { clinicUrl, viewerOf } from './guards.js';
import { messages } from './i18n.js';
import { readKeyForm, type KeyForm } from './key-input.js';
import { listedKey, manageableKey } from './key-views.js';
import { OVERLAP_CHOICES } from './locales/messages.js';
import type { KeyView } from './views/api-keys.js';
import { currentKeyForm, editPage } from './views/key-edit.js';
import { rollPage } from './views/key-roll.js';

export async function keyChangeRoutes(app: PageHandlers, ctx: AdminContext) {
  const listUrl = (v: Viewer, clinic: Clinic) => clinicUrl(v, clinic, '/dashboard/settings/api');
  const here = (v: Viewer, clinic: Clinic, id: string, what: 'edit' | 'roll') =>
    clinicUrl(v, clinic, `/dashboard/settings/api/keys/${id}/${what}`);

  /**
   * The key in the path as the views show it; null when it is not active or was rolled (a
   * rolled key follows its replacement until it ends: it is not edited or rolled on its own),
   * and the caller goes back to the list.
   */
  async function activeKey(req: FastifyRequest, v: Viewer) {
    const { key, clinic } = await manageableKey(ctx, req, v);
    const view = await listedKey(ctx, clinic.id, key.id, ctx.now(), clinic.timezone);
    const usable = view.status === 'active' && view.replacedBy === null;
    return { clinic, view: usable ? view : null };
  }

  function renderEdit(req: FastifyRequest, reply: FastifyReply, v: Viewer, clinic: Clinic, key: KeyView, form: KeyForm, status: number) {
    const t = messages(pageLang(req));
    const page = editPage({
      t,
      fmt: new Formatter(t, clinic.timezone, ctx.now()),
      person: v,
      csrf: csrfToken(v.token),
      clinic,
      key,
      form,
      keyPrefix: ctx.config.apiKeyPrefix,
      action: here(v, clinic, key.id, 'edit'),
      cancel: listUrl(v, clinic),
    });
    return sendPage(reply, status, page);
  }

  function renderRoll(
    req: FastifyRequest,
    reply: FastifyReply,
    v: Viewer,
    clinic: Clinic,
    key: KeyView,
    overlap: string,
    error: string | null,
  ) {
    const t = messages(pageLang(req));
    const page = rollPage({
      t,
      fmt: new Formatter(t, clinic.timezone, ctx.now()),
      person: v,
      csrf: csrfToken(v.token),
      clinic,
      key,
      keyPrefix: ctx.config.apiKeyPrefix,
      overlap,
      error,
      action: here(v, clinic, key.id, 'roll'),
      cancel: listUrl(v, clinic),
    });
    return sendPage(reply, error ? 400 : 200, page);
  }

  app.get('/settings/api/keys/:id/edit', async (req, reply) => {
    const v = viewerOf(req);
    const { clinic, view } = await activeKey(req, v);
    if (!view) return reply.redirect(listUrl(v, clinic), 303);
    return renderEdit(req, reply, v, clinic, view, currentKeyForm(view), 200);
  });

  app.post('/settings/api/keys/:id/edit', async (req, reply) => {
    const v = viewerOf(req);
    const { clinic, view } = await activeKey(req, v);
    if (!view) return reply.redirect(listUrl(v, clinic), 303);
    const { form, input } = readKeyForm(req.body, messages(pageLang(req)), null);
    if (!input) return renderEdit(req, reply, v, clinic, view, form, 400);
    // Evicted here at once and announced to the other instances (KeyService.update).
    await ctx.keys.update(clinic.id, view.id, { name: input.name, scopes: input.scopes, allowedIps: input.allowedIps });
    req.log.info({ clinic: clinic.id, key: view.id, user: v.userId, scopes: input.scopes }, 'dashboard: API key changed');
    await ctx.sessions.setFlash(v.token, { kind: 'updated', clinicId: clinic.id, keyId: view.id, name: input.name });
    return reply.redirect(listUrl(v, clinic), 303);
  });

  app.get('/settings/api/keys/:id/roll', async (req, reply) => {
    const v = viewerOf(req);
    const { clinic, view } = await activeKey(req, v);
    if (!view) return reply.redirect(listUrl(v, clinic), 303);
    return renderRoll(req, reply, v, clinic, view, '', null);
  });

  app.post('/settings/api/keys/:id/roll', async (req, reply) => {
    const v = viewerOf(req);
    const { clinic, view } = await activeKey(req, v);
    if (!view) return reply.redirect(listUrl(v, clinic), 303);
    const overlap = field(req.body, 'overlap');
    if (!(OVERLAP_CHOICES as readonly string[]).includes(overlap))
      return renderRoll(req, reply, v, clinic, view, overlap, messages(pageLang(req)).keys.overlapInvalid);
    const rolled = await ctx.keys.roll(clinic.id, view.id, Number(overlap), v.userId);
    if (!rolled) return reply.redirect(listUrl(v, clinic), 303);
    const { issued } = rolled;
    req.log.info({ clinic: clinic.id, key: issued.id, replaces: view.id, user: v.userId }, 'dashboard: API key rolled');
    // The new key is shown once by the next GET of the list, as a created key is.
    await ctx.sessions.setFlash(v.token, createdFlash(issued, rolled.oldExpiresAt));
    return reply.redirect(listUrl(v, clinic), 303);
  });
}
