// Where long unbroken text in the dashboard's tables may wrap: e-mail addresses and request paths
// have no spaces, and breaking them anywhere (overflow-wrap: anywhere) cut them mid-word and
// mid-token ("ana.garcia@aur|ora.example", "%2|Ccita"). These mark the places a reader expects a
// line to break (<wbr>: nothing is added to copied text); the CSS (.email, .path in assets.ts)
// keeps an address's two halves whole, and breaks a path elsewhere only when one piece is wider
// than the whole cell.
import { html, type Html } from '../html.js';

/** An e-mail address that may wrap only before its "@" (not at a hyphen of its domain). */
export function emailText(email: string): Html {
  const at = email.lastIndexOf('@');
  if (at <= 0) return html`<span class="email"><span>${email}</span></span>`;
  return html`<span class="email"><span>${email.slice(0, at)}</span><wbr><span>${email.slice(at)}</span></span>`;
}

/**
 * A request line (method, path, query) that may wrap after each "/", before each "?" and "&",
 * after a parameter's "=" and between the items of a list value ("," or "%2C").
 */
export function pathText(text: string): Html {
  const pieces = text.split(/(?<=[/=,])|(?=[?&]|%2C)/i);
  return html`<span class="path">${pieces.map((p, i) => (i === 0 ? p : html`<wbr>${p}`))}</span>`;
}
