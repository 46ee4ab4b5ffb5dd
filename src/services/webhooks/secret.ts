// Webhook signing secrets: made here, shown once, stored only encrypted. The secret must be
// usable again at every delivery (it signs), so a hash will not do: it is sealed with AES-256-GCM
// under a key derived by HKDF from API_KEY_PEPPER with a label of its own, so the key hashes and
// the secrets never share a key. A stolen database without the pepper reveals no secret.
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';
import { memo } from '../../memo.js';

/** Standard Webhooks: "whsec_" and the base64 of the key's bytes (24 random bytes: 192 bits). */
const SECRET_BYTES = 24;
const LABEL = 'clinic-api webhook secrets v1';
const VERSION = 'v1';

export function generateWebhookSecret(): string {
  return `whsec_${randomBytes(SECRET_BYTES).toString('base64')}`;
}

/** The sealing key of a pepper (a process has one; tests a few). */
const keyFor = memo(16, (pepper: string): Buffer => Buffer.from(hkdfSync('sha256', pepper, Buffer.alloc(0), LABEL, 32)));

/** `v1.<base64url(iv | tag | ciphertext)>`, bound to the endpoint id (AAD): a sealed secret copied to another row does not open. */
export function sealSecret(pepper: string, endpointId: string, secret: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', keyFor(pepper), iv);
  cipher.setAAD(Buffer.from(endpointId));
  const body = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
  return `${VERSION}.${Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64url')}`;
}

/** The secret; throws when the pepper or the endpoint is not the one it was sealed with. */
export function openSecret(pepper: string, endpointId: string, sealed: string): string {
  const [version, data] = sealed.split('.');
  if (version !== VERSION || !data) throw new Error('webhook secret: unknown format');
  const raw = Buffer.from(data, 'base64url');
  const decipher = createDecipheriv('aes-256-gcm', keyFor(pepper), raw.subarray(0, 12));
  decipher.setAAD(Buffer.from(endpointId));
  decipher.setAuthTag(raw.subarray(12, 28));
  return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8');
}
