// The dashboard's catalogues by language: messages(lang) is every text of a page in `lang`
// (locales/es.ts, locales/en.ts, typed by locales/messages.ts). Which language a page uses is
// decided in negotiate.ts; counting and formatting in that language is format.ts.
import { en } from './locales/en.js';
import { es } from './locales/es.js';
import { LANGS, type Lang, type Messages } from './locales/messages.js';

// A language in LANGS without a catalogue here is a compile error.
const CATALOGUES = { es, en } satisfies Record<Lang, Messages>;

/** Each language's name in that language (what the switch shows, so everyone finds their own). */
export const LANG_NAMES = { es: 'Español', en: 'English' } satisfies Record<Lang, string>;

export function messages(lang: Lang): Messages {
  return CATALOGUES[lang];
}

/** `value` if it names a language the dashboard speaks (exactly: "es", not "ES" or "es-MX"), else null. */
export function asLang(value: unknown): Lang | null {
  return LANGS.find((lang) => lang === value) ?? null;
}
