// Which language a dashboard page is in. Pure decisions over inputs already read and validated by
// the caller (context.ts pageLang): each is a Lang, or null when absent or unknown.
import { asLang } from './i18n.js';
import type { Lang } from './locales/messages.js';

/** When nothing names a language the dashboard speaks. */
export const DEFAULT_LANG: Lang = 'es';

export interface LangInputs {
  /** `?lang=` in the address (or the sign-in form's hidden copy of it): this page only */
  page?: Lang | null;
  /** the person's choice with the language switch (the `clinic_lang` cookie) */
  chosen?: Lang | null;
  /** the language the session was started in: the sign-in page's, when it was someone's preference */
  session?: Lang | null;
  /** the language of the clinic in view (signed-in pages) */
  clinic?: Lang | null;
  /** the browser's Accept-Language header */
  acceptLanguage?: string | undefined;
}

/** The language of a page, most explicit first; Spanish when nothing names one. */
export function resolveLang(o: LangInputs): Lang {
  return preferredLang(o) ?? DEFAULT_LANG;
}

/**
 * The language someone asked for, or null when the page would only be in the default: the page's
 * `?lang=`, the person's choice, the session's language, the clinic's, then the browser's. The
 * sign-in route keeps this (not resolveLang's default) as the session's language, so a person
 * whose browser prefers neither language gets the clinic's once signed in.
 */
export function preferredLang(o: LangInputs): Lang | null {
  return o.page ?? o.chosen ?? o.session ?? o.clinic ?? negotiateLang(o.acceptLanguage);
}

/**
 * The language the browser prefers among those the dashboard speaks (Accept-Language, q-values
 * honoured, the first of equal ones), or null when it names none of them.
 */
export function negotiateLang(acceptLanguage: string | undefined): Lang | null {
  if (!acceptLanguage) return null;
  let best: { lang: Lang; q: number } | null = null;
  for (const part of acceptLanguage.split(',').slice(0, 20)) {
    const [tag, ...params] = part.trim().split(';');
    const lang = asLang(tag?.trim().toLowerCase().split('-')[0]);
    if (!lang) continue;
    const qp = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    const q = qp ? Number(qp.slice(2)) : 1;
    if (!Number.isFinite(q) || q <= 0) continue;
    if (!best || q > best.q) best = { lang, q };
  }
  return best?.lang ?? null;
}
