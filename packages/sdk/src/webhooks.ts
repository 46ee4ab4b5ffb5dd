// @clinic-api/sdk/webhooks: checks that a webhook delivery comes from the service, with the
// Standard Webhooks project's own library (`standardwebhooks`, the library the service signs
// with): the HMAC-SHA256 signature of "id.timestamp.body" under the endpoint's whsec_ secret, and a
// timestamp within 5 minutes of this machine's clock (against replays). It adds what a receiver
// would otherwise write itself: headers as any runtime has them (a fetch Headers, Node's
// IncomingHttpHeaders), the body as text or bytes, the event typed, and one error class.
import { Webhook, WebhookVerificationError as LibraryVerificationError } from 'standardwebhooks';
import type { Evento } from './types.js';

/** The `ping` that "Send test event" (dashboard) and `clinic-api webhooks test` deliver; not part of the feed. */
export interface PingEvent {
  id: string;
  tipo: 'ping';
  ocurrido_at: string;
  datos: { endpoint_id: string; mensaje: string };
}

/** What a delivery carries: an event of the change feed, or a ping. */
export type WebhookEvent = Evento | PingEvent;

/** Request headers as a runtime gives them: a fetch `Headers`, or a plain object such as Node's `req.headers`. */
export type WebhookHeaders = Headers | Record<string, string | readonly string[] | undefined>;

/** The delivery is not from the service (wrong secret or altered body), or too old or too new (replay): answer 400. */
export class WebhookVerificationError extends Error {
  override name = 'WebhookVerificationError';
}

export class WebhookVerifier {
  private readonly webhook: Webhook;

  /** `secret`: the endpoint's signing secret, `whsec_...`, shown once when the endpoint was added. */
  constructor(secret: string) {
    if (typeof secret !== 'string' || !secret.startsWith('whsec_') || secret.length <= 'whsec_'.length) {
      throw new TypeError(
        "WebhookVerifier: the secret must be the endpoint's signing secret, whsec_... (shown once when the endpoint was added)",
      );
    }
    this.webhook = new Webhook(secret);
  }

  /**
   * The event of a delivery, after checking its signature and timestamp over the body exactly as
   * received (before any JSON parsing: a parsed and re-serialised body no longer matches).
   * Throws WebhookVerificationError when the delivery must be refused.
   */
  verify(body: string | Uint8Array | ArrayBuffer, headers: WebhookHeaders): WebhookEvent {
    const text = typeof body === 'string' ? body : new TextDecoder().decode(body);
    try {
      return this.webhook.verify(text, plainHeaders(headers)) as WebhookEvent;
    } catch (err) {
      if (err instanceof LibraryVerificationError)
        throw new WebhookVerificationError(`webhook delivery refused: ${err.message}`, { cause: err });
      if (err instanceof SyntaxError)
        throw new WebhookVerificationError('webhook delivery refused: the signed body is not JSON', { cause: err });
      throw err;
    }
  }
}

/** `new WebhookVerifier(secret).verify(body, headers)`, for one delivery. */
export function verifyWebhook(secret: string, body: string | Uint8Array | ArrayBuffer, headers: WebhookHeaders): WebhookEvent {
  return new WebhookVerifier(secret).verify(body, headers);
}

function plainHeaders(headers: WebhookHeaders): Record<string, string> {
  const out: Record<string, string> = {};
  if (typeof (headers as Headers).forEach === 'function' && typeof (headers as Headers).get === 'function') {
    (headers as Headers).forEach((value, name) => {
      out[name.toLowerCase()] = value;
    });
    return out;
  }
  for (const [name, value] of Object.entries(headers as Record<string, string | readonly string[] | undefined>)) {
    if (value === undefined) continue;
    // several webhook-signature values are one space-separated list
    out[name.toLowerCase()] = typeof value === 'string' ? value : value.join(' ');
  }
  return out;
}
