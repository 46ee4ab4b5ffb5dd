// What reaches the logs. Secrets never do:
// - no request headers at all (Authorization carries keys);
// - anything shaped like a key, wherever it was pasted (the path, a parameter's name or value,
//   percent-encoded or not), is masked: the configured prefix followed by `_`, the default shape
//   (`<2-16 lowercase letters or digits>_<43 base64url characters>`, so keys made under another
//   prefix too), a webhook signing secret (`whsec_...`), and any other long opaque token (32+
//   characters of the key alphabet that are not a UUID);
// - of the query string only the values of non-personal filters are kept; `q` (a name or a
//   phone) and anything unknown are masked whatever they hold;
// - an error's message and stack are masked the same way, and the raw bytes of a request Node
//   could not parse (`rawPacket`) are dropped.
import type { FastifyRequest } from 'fastify';
import { stdSerializers } from 'pino';
// The masker is the domain's (the webhooks' delivery log masks receivers' answers with it too).
import { MASK, secretMasker } from '../domain/secret-mask.js';

export { MASK, secretMasker };

// The lists' and the feed's filters: dates, numbers and fixed words. (`cursor` is left out: it is
// an opaque token, which the rule for long tokens would mask anyway.)
const SAFE_PARAMS = new Set(['desde', 'hasta', 'limit', 'offset', 'vip', 'estado', 'resultado', 'updated_since', 'tipo']);
/**
 * Percent-decoding that never throws, repeated so that double encoding hides nothing. A `+` is a
 * space only as sent: one decoded from `%2B` is a plus (an offset such as +01:00).
 */
function decodeFully(s: string): string {
  let out = s.replace(/\+/g, ' ');
  for (let i = 0; i < 3; i++) {
    let next: string;
    try {
      next = decodeURIComponent(out);
    } catch {
      // Malformed escapes: decode the well-formed ones one at a time.
      next = out.replace(/(%[0-9A-Fa-f]{2})+/g, (m) => {
        try {
          return decodeURIComponent(m);
        } catch {
          return m;
        }
      });
    }
    if (next === out) return out;
    out = next;
  }
  return out;
}

/** encodeURIComponent, keeping the mask's brackets readable. */
function enc(s: string): string {
  return encodeURIComponent(s).replace(/%5B/g, '[').replace(/%5D/g, ']');
}

/** The URL to log: its path and every parameter name and value masked as above, then re-encoded. */
export function redactUrl(url: string, mask: (text: string) => string = secretMasker('svc')): string {
  const i = url.indexOf('?');
  const rawPath = i < 0 ? url : url.slice(0, i);
  const path = mask(decodeFully(rawPath));
  // Keep the path readable; encode only what would break the log line's meaning.
  const safePath = encodeURI(path).replace(/%5B/g, '[').replace(/%5D/g, ']');
  if (i < 0) return safePath;
  const parts: string[] = [];
  for (const pair of url.slice(i + 1).split('&')) {
    if (pair === '') continue;
    const eq = pair.indexOf('=');
    const name = mask(decodeFully(eq < 0 ? pair : pair.slice(0, eq)));
    const value = eq < 0 ? null : decodeFully(pair.slice(eq + 1));
    const shown = value === null ? '' : `=${SAFE_PARAMS.has(name) ? enc(mask(value)) : MASK}`;
    parts.push(`${enc(name)}${shown}`);
  }
  return `${safePath}?${parts.join('&')}`;
}

/** pino serializers for Fastify's logger: `req` (no headers, masked URL) and `err` (masked, no raw bytes). */
export function logSerializers(prefix: string) {
  const mask = secretMasker(prefix);
  return {
    req: (req: FastifyRequest) => ({ method: req.method, url: redactUrl(req.url, mask), ip: req.ip }),
    err: (err: Error) => {
      const out = stdSerializers.err(err) as unknown as { type: string; message: string; stack: string; [k: string]: unknown };
      delete out.rawPacket;
      for (const k of ['message', 'stack', 'detail', 'url']) if (typeof out[k] === 'string') out[k] = mask(out[k] as string);
      return out;
    },
  };
}
