// Standard Webhooks 1.0 verification of a delivery, with the endpoint's secret that the
// subscription answered (kept by Zapier in the Zap's subscribeData). Written out here rather than
// taken from a library: it is a dozen lines of node:crypto, and the integration stays one dependency.
import { createHmac, timingSafeEqual } from 'node:crypto';

/** How far a delivery's timestamp may be from now (the libraries' default), against replays. */
export const TOLERANCE_S = 5 * 60;

export interface Delivery {
  id: string;
  timestamp: string;
  /** `v1,<base64>` entries separated by spaces (several during a secret's rotation). */
  signature: string;
  /** The body's bytes as received, as text. */
  body: string;
}

export type Verdict = 'valid' | 'bad_signature' | 'stale';

export function verify(secret: string, d: Delivery, nowS: number): Verdict {
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  const expected = createHmac('sha256', key).update(`${d.id}.${d.timestamp}.${d.body}`).digest();
  const matches = d.signature.split(' ').some((entry) => {
    const [version, value] = entry.split(',', 2);
    if (version !== 'v1' || !value) return false;
    const given = Buffer.from(value, 'base64');
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
  if (!matches) return 'bad_signature';
  const ts = Number(d.timestamp);
  return Number.isInteger(ts) && Math.abs(nowS - ts) <= TOLERANCE_S ? 'valid' : 'stale';
}

/**
 * A header of the delivery as Zapier hands it over: names arrive in any case, and Zapier's hook
 * receiver prefixes them with `Http-` (`Http-Webhook-Signature`).
 */
export function header(headers: Record<string, string> | undefined, name: string): string | undefined {
  if (!headers) return undefined;
  const wanted = [name.toLowerCase(), `http-${name.toLowerCase()}`];
  for (const [k, v] of Object.entries(headers)) if (wanted.includes(k.toLowerCase())) return v;
  return undefined;
}
