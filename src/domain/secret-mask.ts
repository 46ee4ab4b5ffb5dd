// What looks like a secret in a text (an API key under any prefix, a webhook signing secret, any
// long opaque token), masked: the logs, the request log and the webhooks' delivery log use it.
import { UUID_RE } from './records.js';

export const MASK = '[redacted]';

/** A function that masks every key-shaped part of a text. */
export function secretMasker(prefix: string): (text: string) => string {
  const shapes = new RegExp(
    [
      // the configured prefix and whatever follows it (even a truncated key leaks part of a secret)
      `${prefix}_[A-Za-z0-9_-]*`,
      // the default shape, under any prefix
      '[a-z][a-z0-9]{1,15}_[A-Za-z0-9_-]{43}',
      // a webhook signing secret (Standard Webhooks: whsec_ and standard base64, whose + and /
      // would otherwise cut it into pieces too short for the next rule; a + decoded from a query
      // string is a space)
      'whsec_[A-Za-z0-9+/= _-]*',
      // any long opaque token
      '[A-Za-z0-9_-]{32,}',
    ].join('|'),
    'g',
  );
  return (text) => text.replace(shapes, (m) => (UUID_RE.test(m) ? m : MASK));
}
