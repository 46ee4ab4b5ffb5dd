// The dashboard's catalogues (src/admin/locales): every language has every text, in the same
// shape, and every closed set (API error codes, roles, plans, states...) has a label in every
// language. The compiler already refuses a catalogue with a text missing or extra; the checks
// marked @ts-expect-error below fail `npm run typecheck` if the types ever stop doing that, and the
// runtime checks catch what types cannot see (an empty text, a `{n}` left out of a count).
import { describe, expect, it } from 'vitest';
import { PLANS, ROLES } from '../../src/domain/records.js';
import { SCOPE_TEXTS, SCOPES } from '../../src/domain/scopes.js';
import { ERROR_CODES, type ErrorCode } from '../../src/errors.js';
import { LANG_NAMES, messages } from '../../src/admin/i18n.js';
import { en } from '../../src/admin/locales/en.js';
import { LANGS, labelOf, type Messages } from '../../src/admin/locales/messages.js';

/** Every text of a catalogue by its path: "wh.status.active", "usageLead()", "requests.one"... */
function texts(o: object, prefix = ''): Map<string, unknown> {
  const out = new Map<string, unknown>();
  for (const [k, v] of Object.entries(o)) {
    const path = prefix + k;
    if (v !== null && typeof v === 'object') for (const [p, t] of texts(v, `${path}.`)) out.set(p, t);
    else out.set(typeof v === 'function' ? `${path}(${v.length})` : path, v);
  }
  return out;
}

const PLURAL_KEYS = ['throttled', 'usageTitle', 'requests', 'errorsCount', 'okRequests', 'noUsageAtAll', 'idleKeys', 'errorTimes'] as const;

describe('dashboard catalogues', () => {
  const reference = [...texts(messages('es')).keys()].sort();

  it.each(LANGS)('%s has every text the other languages have, with the same parameters, and none empty', (lang) => {
    const t = texts(messages(lang));
    expect([...t.keys()].sort()).toEqual(reference);
    expect(reference.length).toBeGreaterThan(200);
    // '' is a text only where a value has no label on purpose: an ordinary delivery has no "(kind)".
    const empty = [...t].filter(([path, v]) => v === '' && path !== 'wh.kinds.auto').map(([path]) => path);
    expect(empty).toEqual([]);
    expect(messages(lang).htmlLang).toBe(lang);
    expect(LANG_NAMES[lang]).toMatch(/^\p{Lu}/u);
  });

  it.each(LANGS)('%s explains every API error code the dashboard can show', (lang) => {
    const help = messages(lang).errorHelp;
    expect(Object.keys(help).sort()).toEqual(Object.keys(ERROR_CODES).sort());
    for (const code of Object.keys(ERROR_CODES)) expect(labelOf(help, code), `${lang} ${code}`).toMatch(/\S/);
  });

  it.each(LANGS)('%s labels every role and plan', (lang) => {
    const t = messages(lang);
    expect(Object.keys(t.roles).sort()).toEqual([...ROLES].sort());
    expect(Object.keys(t.plans).sort()).toEqual([...PLANS].sort());
  });

  it.each(LANGS)('%s counts with {n} in every form of every counted phrase', (lang) => {
    const t = messages(lang);
    for (const key of PLURAL_KEYS) {
      for (const [category, form] of Object.entries(t[key])) {
        // "the last day" needs no number; every other form shows it
        if (category === 'one' && (key === 'usageTitle' || key === 'noUsageAtAll' || key === 'idleKeys')) continue;
        expect(form, `${lang} ${key}.${category}`).toContain('{n}');
      }
    }
    for (const [category, form] of Object.entries(t.keys.expiresSoon))
      expect(form, `${lang} keys.expiresSoon.${category}`).toContain('{n}');
  });

  it.each(LANGS)('%s names and explains every scope, in the words of the one list of scopes', (lang) => {
    const t = messages(lang);
    expect(Object.keys(t.keys.scopes)).toEqual([...SCOPES]);
    for (const s of SCOPES) expect(t.keys.scopes[s]).toEqual(SCOPE_TEXTS[s][lang]);
  });

  it('looks labels up by own keys only', () => {
    expect(labelOf(en.errorHelp, 'cursor_expired')).toBe(en.errorHelp.cursor_expired);
    expect(labelOf(en.errorHelp, 'constructor')).toBeUndefined();
    expect(labelOf(en.errorHelp, 'no_such_code')).toBeUndefined();
  });

  it('refuses, at compile time, a catalogue with a text missing or extra, and help missing for a code', () => {
    const { errorHelp: _errorHelp, ...withoutHelp } = en;
    // @ts-expect-error: a catalogue without errorHelp is not a Messages
    const missingText: Messages = withoutHelp;
    // @ts-expect-error: a text the type does not have
    const extraText = { ...en, notAText: 'x' } satisfies Messages;
    const help: Partial<Record<ErrorCode, string>> = { not_found: 'a request asked for a path that does not exist' };
    // @ts-expect-error: every code needs its help, not only some
    const missingHelp: Messages['errorHelp'] = help;
    expect([missingText, extraText, missingHelp]).toHaveLength(3);
  });
});
