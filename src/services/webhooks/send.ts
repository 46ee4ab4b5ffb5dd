// One delivery attempt: a signed POST to a vetted address, with a total time limit, no
// redirects, and at most RESPONSE_CAP bytes of the answer read (its status, and its first
// EXCERPT_BYTES for the delivery log).
// node:https/node:http (undici 8 needs Node 22.19+, above our floor). The socket connects to the
// address destination.ts vetted, through a `lookup` that answers only it, while TLS still checks
// the certificate against the URL's host name.
import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { spans } from '../../spans.js';
import { checkUrl, DestinationRefused, systemResolver, vetHost, type Resolver } from './destination.js';

/** Bytes of a response read at most (then the connection is dropped). */
export const RESPONSE_CAP = 4_096;
/** Bytes of an answer's body kept for the delivery log (masked there). */
export const EXCERPT_BYTES = 1_024;
export const USER_AGENT = 'clinic-api-webhooks/1 (+https://www.standardwebhooks.com)';

export interface SendOptions {
  allowPrivate: boolean;
  timeoutMs: number;
  resolve?: Resolver;
  /**
   * Called once the destination is vetted, right before the request is written (the worker
   * renews its lease there); false: nothing is sent, and the attempt is `not_sent`.
   */
  beforeSend?: () => Promise<boolean>;
}

export interface Attempt {
  ok: boolean;
  statusCode: number | null;
  /**
   * why it failed, as a short code: http_<status>, redirect, timeout, refused_address, dns,
   * connection, tls; not_sent (beforeSend said no), aborted
   */
  error: string | null;
  durationMs: number;
  /** Retry-After, as the receiver sent it (503 and 429 mostly) */
  retryAfter: string | undefined;
  /** the first EXCERPT_BYTES of the answer's body, as text (null: no answer, or an empty one) */
  body: string | null;
}

/** The Standard Webhooks headers of `body` for message `id`, signed with `secret` (whsec_...). */
export function signedHeaders(secret: string, id: string, body: string, atMs: number): Record<string, string> {
  const timestamp = new Date(atMs);
  return {
    'webhook-id': id,
    'webhook-timestamp': String(Math.floor(atMs / 1000)),
    'webhook-signature': new Webhook(secret).sign(id, timestamp, body),
  };
}

/** A `lookup` that answers only the vetted address (also for OAuth's client metadata documents). */
export function pinned(address: string, family: number): LookupFunction {
  return ((_host: string, options: { all?: boolean }, callback: (...args: unknown[]) => void) => {
    if (options?.all) callback(null, [{ address, family }]);
    else callback(null, address, family);
  }) as unknown as LookupFunction;
}

function errorCode(err: NodeJS.ErrnoException): string {
  const code = err.code ?? '';
  if (code.startsWith('ERR_TLS') || code.startsWith('CERT_') || code.includes('SELF_SIGNED') || code === 'UNABLE_TO_VERIFY_LEAF_SIGNATURE')
    return 'tls';
  return 'connection';
}

/**
 * Sends `body` as event `id` to `rawUrl`. Never throws: every outcome is an Attempt. With tracing
 * on, in a span with the receiver's host and the outcome: never the URL's path or query, which
 * may be the receiver's secret (a catch hook's token).
 */
export function sendWebhook(
  rawUrl: string,
  secret: string,
  id: string,
  body: string,
  opts: SendOptions,
  signal?: AbortSignal,
): Promise<Attempt> {
  if (spans === null) return sendOnce(rawUrl, secret, id, body, opts, signal);
  const host = URL.canParse(rawUrl) ? new URL(rawUrl).hostname : '';
  return spans.inSpan(
    'webhook send',
    { 'server.address': host, 'clinic_api.event.id': id },
    async (notes) => {
      const attempt = await sendOnce(rawUrl, secret, id, body, opts, signal);
      if (attempt.statusCode !== null) notes.setAttributes({ 'http.response.status_code': attempt.statusCode });
      if (!attempt.ok) notes.fail(attempt.error ?? 'failed');
      return attempt;
    },
    { kind: 'client' },
  );
}

async function sendOnce(
  rawUrl: string,
  secret: string,
  id: string,
  body: string,
  opts: SendOptions,
  signal?: AbortSignal,
): Promise<Attempt> {
  const started = performance.now();
  const done = (a: Omit<Attempt, 'durationMs' | 'retryAfter' | 'body'> & { retryAfter?: string; body?: string | null }): Attempt => ({
    retryAfter: undefined,
    body: null,
    ...a,
    durationMs: Math.round(performance.now() - started),
  });
  let url: URL;
  let target: { address: string; family: number };
  try {
    url = checkUrl(rawUrl, opts.allowPrivate);
    target = await vetHost(url, opts.allowPrivate, opts.resolve ?? systemResolver);
  } catch (err) {
    const kind = err instanceof DestinationRefused ? (err.refusal === 'unresolvable' ? 'dns' : 'refused_address') : 'connection';
    return done({ ok: false, statusCode: null, error: kind });
  }
  if (opts.beforeSend && !(await opts.beforeSend().catch(() => false))) return done({ ok: false, statusCode: null, error: 'not_sent' });
  const headers = {
    // The receiver checks the timestamp against its own clock: always the real time of sending.
    ...signedHeaders(secret, id, body, Date.now()),
    'content-type': 'application/json',
    'content-length': String(Buffer.byteLength(body)),
    'user-agent': USER_AGENT,
  };
  const lib = url.protocol === 'https:' ? https : http;
  return new Promise<Attempt>((resolve) => {
    let settled = false;
    const finish = (a: Attempt) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      req.destroy();
      resolve(a);
    };
    const req = lib.request(
      url,
      {
        method: 'POST',
        headers,
        lookup: pinned(target.address, target.family),
        // A fresh connection each time: a pooled socket would skip the address check of this attempt.
        agent: false,
      },
      (res) => {
        const status = res.statusCode ?? 0;
        const retryAfter = typeof res.headers['retry-after'] === 'string' ? res.headers['retry-after'] : undefined;
        let read = 0;
        const kept: Buffer[] = [];
        const end = () => {
          const excerpt = Buffer.concat(kept).subarray(0, EXCERPT_BYTES);
          finish(
            done({
              ok: status >= 200 && status < 300,
              statusCode: status,
              error: status >= 200 && status < 300 ? null : status >= 300 && status < 400 ? 'redirect' : `http_${status}`,
              retryAfter,
              body: excerpt.length > 0 ? excerpt.toString('utf8') : null,
            }),
          );
        };
        // The body is not wanted: read up to the cap (so a small answer completes normally), then drop the connection.
        res.on('data', (chunk: Buffer) => {
          if (read < EXCERPT_BYTES) kept.push(chunk);
          read += chunk.length;
          if (read >= RESPONSE_CAP) end();
        });
        res.on('end', end);
        res.on('error', end);
        res.on('aborted', end);
      },
    );
    // The time limit is decided after the loop's next poll phase: when the process was stalled
    // (a starved host) past the limit, the timer and an answer that arrived in time are both
    // waiting when it resumes, and timers run first; the answer, read in that poll, wins.
    const timer = setTimeout(() => setImmediate(() => finish(done({ ok: false, statusCode: null, error: 'timeout' }))), opts.timeoutMs);
    const onAbort = () => finish(done({ ok: false, statusCode: null, error: 'aborted' }));
    signal?.addEventListener('abort', onAbort, { once: true });
    req.on('error', (err: NodeJS.ErrnoException) => finish(done({ ok: false, statusCode: null, error: errorCode(err) })));
    req.end(body);
  });
}
