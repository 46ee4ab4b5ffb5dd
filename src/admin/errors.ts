// The dashboard's one error page: a refusal (DomainError, from a route or a service), Fastify's
// own client errors (an unreadable body, an unsupported media type...) and anything unexpected,
// each rendered as an HTML page with its status. This is where the dashboard maps DomainError.
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError, DomainError, type DomainReason } from '../errors.js';
import { UNUSABLE_TEXT } from './input.js';
import { herePath, pageLang, sendPage } from './context.js';
import { csrfToken } from './csrf.js';
import { messages } from './i18n.js';
import type { Messages } from './locales/messages.js';

/** What a busy page's Retry-After says: an import's lock lasts longer, a server's writes far less. */
const WRITE_BUSY_RETRY_AFTER_S = 5;

interface ErrorPage {
  status: number;
  title: string;
  text: string;
  tone: 'danger' | 'warning' | 'info';
}

/** The page for each reason a dashboard request can be refused for; null: not a refusal (a bug). */
function refusalPage(reason: DomainReason, t: Messages): ErrorPage | null {
  switch (reason) {
    case 'not_found':
      return { status: 404, title: t.notFoundTitle, text: t.notFoundText, tone: 'info' };
    case 'forbidden':
      return { status: 403, title: t.forbiddenTitle, text: t.forbiddenRole, tone: 'warning' };
    case 'plan_not_eligible':
      return { status: 403, title: t.forbiddenTitle, text: t.forbiddenPlan, tone: 'warning' };
    case 'csrf_failed':
      return { status: 403, title: t.csrfTitle, text: t.csrfText, tone: 'warning' };
    case 'api_key_on_dashboard':
      return { status: 401, title: t.apiKeyTitle, text: t.apiKeyText, tone: 'danger' };
    case 'invalid_input':
    case 'conflict':
    case 'rejected':
      return { status: 400, title: t.badRequestTitle, text: t.badRequestText, tone: 'danger' };
    case 'busy':
      return { status: 503, title: t.writeBusyTitle, text: t.writeBusyText, tone: 'warning' };
    case 'invalid_config':
    case 'expired':
    case 'environment':
    case 'insufficient_scope':
      return null;
  }
}

export async function renderErrorPage(err: unknown, req: FastifyRequest, reply: FastifyReply) {
  // Imported here, not at start: a process that serves only the API never holds the views (pages.ts).
  const { messagePage } = await import('./views/message.js');
  const t = messages(pageLang(req));
  const v = req.viewer;
  const person = v ? { email: v.email, role: v.role } : null;
  const csrf = v ? csrfToken(v.token) : null;
  let page = err instanceof DomainError ? refusalPage(err.reason, t) : null;
  if (err instanceof DomainError && err.reason === 'invalid_input' && err.message === UNUSABLE_TEXT) {
    page = { status: 400, title: t.unusableTextTitle, text: t.unusableTextText, tone: 'danger' };
  }
  // Another process holds the database's write lock (db/connect.ts WriterBusy): nothing was written.
  if (err instanceof DomainError && err.reason === 'busy') reply.header('retry-after', String(WRITE_BUSY_RETRY_AFTER_S));
  if (err instanceof ApiError && err.code === 'service_unavailable') {
    // Overload (http/plugins/overload.ts), refused before the page's own work.
    reply.headers(err.headers);
    page = { status: 503, title: t.overloadedTitle, text: t.overloadedText, tone: 'warning' };
  }
  // `req` goes through the log serializer, which masks anything shaped like a key in the URL.
  if (err instanceof DomainError && err.reason === 'csrf_failed') req.log.warn({ req }, 'dashboard: form refused (CSRF)');
  const status = (err as FastifyError).statusCode;
  if (page === null && !(err instanceof DomainError) && typeof status === 'number' && status >= 400 && status < 500) {
    // Fastify's own client errors: unreadable body, unsupported media type, too large...
    page = { status, title: t.badRequestTitle, text: t.badRequestText, tone: 'danger' };
  }
  if (page === null) {
    req.log.error({ err }, 'dashboard error');
    return sendPage(
      reply,
      500,
      messagePage({ t, title: t.errorTitle, text: t.errorText, person, csrf, tone: 'danger', reference: req.id, here: herePath(req) }),
    );
  }
  return sendPage(
    reply,
    page.status,
    messagePage({ t, title: page.title, text: page.text, person, csrf, tone: page.tone, here: herePath(req) }),
  );
}
