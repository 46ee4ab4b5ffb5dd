// HTML templating with tagged template literals: every interpolated value is escaped unless it
// is already Html (the result of another html`` template). Type-checked like the rest of the
// code, no template language to learn, and no way to forget escaping at a call site.

export class Html {
  constructor(readonly value: string) {}
  toString(): string {
    return this.value;
  }
}

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;', '`': '&#96;' };

export function escapeHtml(s: string): string {
  return s.replace(/[&<>"'`]/g, (c) => ESCAPES[c]!);
}

/** What a template may interpolate: text (escaped), Html (as is), lists of those, or nothing. */
export type Renderable = Html | string | number | null | undefined | false | readonly Renderable[];

function render(v: Renderable): string {
  if (v === null || v === undefined || v === false) return '';
  if (v instanceof Html) return v.value;
  if (Array.isArray(v)) return v.map(render).join('');
  return escapeHtml(String(v));
}

export function html(strings: TemplateStringsArray, ...values: Renderable[]): Html {
  let out = strings[0] ?? '';
  for (let i = 0; i < values.length; i++) out += render(values[i]) + (strings[i + 1] ?? '');
  return new Html(out);
}

/** Markup the code itself wrote (never user data), e.g. an inline SVG icon. */
export function trusted(markup: string): Html {
  return new Html(markup);
}
