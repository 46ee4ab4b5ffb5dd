// Which language a dashboard page is in. Pure decisions over inputs already read and validated by
// the caller (context.ts pageLang): each is a Lang, or null when absent or unknown.
import { asLang } from './i18n.js';
import type { Lang } from './locales/messages.js';

export interface LangInputs {
  /** `?lang=` in the address (or the sign-in form's hidden copy of it): this page only */
  page?: Lang | null;
  /** the person's choice with the language switch (the `clinic_lang` cookie) */
  chosen?: Lang | null;
  /** the language of the clinic in view (signed-in pages) */
  clinic?: Lang | null;
  /** the browser's Accept-Language header */
  acceptLanguage?: string | undefined;
}

/** The language of a page, most explicit first: the page's `?lang=`, the person's choice, the clinic's, the browser's, Spanish. */
export function resolveLang(o: LangInputs): Lang {
  return o.page ?? o.chosen ?? o.clinic ?? negotiateLang(o.acceptLanguage);
}

/** Spanish unless the browser prefers English over Spanish (Accept-Language, q-values honoured). */
export function negotiateLang(acceptLanguage: string | undefined): Lang {
  if (!acceptLanguage) return 'es';
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
  return best?.lang ?? 'es';
}
