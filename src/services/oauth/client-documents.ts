// Client ID Metadata Documents (MCP 2025-11-25): an app whose client_id is an https URL registers
// nothing; the JSON document at that URL is its registration (client_name, redirect_uris...), and
// it must name that same URL as its client_id. adapter.ts asks this module when the provider looks
// up a client whose id is a URL; the provider then checks the document's metadata as it checks a
// registration's (server.ts, validateClientMetadata) and the redirect_uri against its list.
//
// The fetch is an outbound request chosen by anyone who sends an authorization link, so it follows
// the webhooks' rules (webhooks/destination.ts): every address the host resolves to must be
// public, and the connection goes to exactly the address that was checked (no DNS rebinding); no
// redirects, at most 5 KB read, 5 seconds in all. OAUTH_CLIENT_METADATA_ALLOW_PRIVATE lets a
// document on a loopback address through, over http too, to try an app on one machine; never a
// private network's address. A document is kept as its Cache-Control or Expires allow (at most a
// day), in a bounded cache; a refusal is kept 10 seconds, so the provider's second look-up of the
// same request (its error handler asks again) and a burst of links do not fetch again.
//
// oidc-provider 9 has a feature of its own for these documents; it is not used: it accepts only
// https (no loopback try-out), and its time limit and address checks are its own, not these.
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import { LRUCache } from 'lru-cache';
import { addressClass, MAX_URL_LENGTH, systemResolver, type Resolver } from '../webhooks/destination.js';
import { pinned } from '../webhooks/send.js';

/** Bytes of a document read at most. */
export const MAX_DOCUMENT_BYTES = 5 * 1024;
export const FETCH_TIMEOUT_MS = 5_000;
/** How long a document without caching headers is kept (seconds); and the longest any is. */
export const DEFAULT_KEEP_S = 300;
export const MAX_KEEP_S = 86_400;
const REFUSAL_KEEP_MS = 10_000;
const CACHE_MAX = 1_000;
const USER_AGENT = 'clinic-api-oauth/1 (client ID metadata document)';
export const ALLOW_PRIVATE_HINT =
  'to try an app on this machine, set OAUTH_CLIENT_METADATA_ALLOW_PRIVATE=1 on the server: ' +
  'it lets a document on a loopback address through';

/** The properties of a document the authorization server uses; the rest are ignored. */
const USED = [
  'client_id',
  'client_name',
  'redirect_uris',
  'grant_types',
  'response_types',
  'token_endpoint_auth_method',
  'software_id',
  'software_version',
] as const;

/** Why an app's client_id URL or its document is refused: the message says what is wrong and how to fix it. */
export class ClientDocumentRefused extends Error {}

/** Whether a client_id names a metadata document (registered apps' ids are random, without a scheme). */
export function isClientIdUrl(id: string): boolean {
  return /^[a-z][a-z0-9+.-]*:\/\//i.test(id);
}

/** The client_id URL, checked in form; throws ClientDocumentRefused. */
export function checkClientIdUrl(id: string, allowLoopback: boolean): URL {
  const refuse = (why: string) => new ClientDocumentRefused(`client_id ${id.slice(0, 200)} ${why}`);
  if (id.length > MAX_URL_LENGTH) throw refuse(`is longer than ${MAX_URL_LENGTH} characters`);
  if (!URL.canParse(id)) throw refuse('is not a valid URL');
  const url = new URL(id);
  if (url.protocol !== 'https:' && !(allowLoopback && url.protocol === 'http:'))
    throw refuse(`must be an https:// URL (its metadata document's address); ${ALLOW_PRIVATE_HINT}`);
  if (url.username !== '' || url.password !== '') throw refuse('must not contain a user name or password');
  if (id.includes('#')) throw refuse('must not contain a fragment (#)');
  if (url.pathname === '/') throw refuse('must have a path, such as https://app.example.com/oauth/client.json');
  // The document names itself exactly: a URL that a parser would rewrite (dot segments, an
  // upper-case host, a default port) could be two apps at once.
  if (url.href !== id) throw refuse(`must be written in its normal form, ${url.href}`);
  return url;
}

/** Why an address may not be fetched, or null: public, or loopback when allowed. */
function addressProblem(address: string, allowLoopback: boolean): string | null {
  const kind = addressClass(address);
  if (kind === 'public' || (allowLoopback && kind === 'loopback')) return null;
  return `${address} (${kind})`;
}

/** The address to connect to: every one the host resolves to must pass (a resolver may hand out any). */
async function vetAddress(url: URL, allowLoopback: boolean, resolve: Resolver): Promise<{ address: string; family: number }> {
  const host = url.hostname.replace(/^\[|\]$/g, '');
  let addresses: { address: string; family: number }[];
  if (net.isIP(host)) addresses = [{ address: host, family: net.isIP(host) }];
  else {
    try {
      addresses = await resolve(host);
    } catch (err) {
      throw new ClientDocumentRefused(`client_id's host ${host} does not resolve (${(err as NodeJS.ErrnoException).code ?? 'DNS error'})`);
    }
    if (addresses.length === 0) throw new ClientDocumentRefused(`client_id's host ${host} has no address`);
  }
  for (const a of addresses) {
    const problem = addressProblem(a.address, allowLoopback);
    if (problem)
      throw new ClientDocumentRefused(
        `client_id's host ${host} resolves to ${problem}, which is not a public address: metadata documents are fetched only from ` +
          `public addresses${allowLoopback ? ' (and loopback ones)' : `; ${ALLOW_PRIVATE_HINT}`}`,
      );
  }
  // http:// only on the machine itself, even with the try-out flag.
  if (url.protocol === 'http:' && addresses.some((a) => addressClass(a.address) !== 'loopback'))
    throw new ClientDocumentRefused(`client_id ${url.href} must be an https:// URL: http:// is accepted only on a loopback address`);
  return addresses[0]!;
}

/**
 * How long a document may be kept (seconds), from its response headers: Cache-Control's
 * max-age (no-store, no-cache and max-age=0: not kept), else Expires, else DEFAULT_KEEP_S;
 * never more than MAX_KEEP_S. Pure.
 */
export function keepSeconds(headers: http.IncomingHttpHeaders, nowMs: number): number {
  const cc = String(headers['cache-control'] ?? '').toLowerCase();
  if (/(^|,)\s*(no-store|no-cache)\b/.test(cc)) return 0;
  const maxAge = /(^|,)\s*max-age\s*=\s*"?(\d+)/.exec(cc);
  let s: number;
  if (maxAge) s = Number(maxAge[2]);
  else if (typeof headers.expires === 'string') {
    const at = Date.parse(headers.expires);
    s = Number.isNaN(at) ? 0 : Math.floor((at - nowMs) / 1000);
  } else s = DEFAULT_KEEP_S;
  return Math.max(0, Math.min(MAX_KEEP_S, s));
}

/** Why a parsed document is refused for `id`, or null. Pure. */
export function documentProblem(doc: unknown, id: string): string | null {
  if (doc === null || typeof doc !== 'object' || Array.isArray(doc)) return `the document at ${id} is not a JSON object`;
  const d = doc as Record<string, unknown>;
  if (d.client_id !== id)
    return (
      `the document at ${id} names ${typeof d.client_id === 'string' ? d.client_id : 'no'} client_id; ` +
      'its client_id must be its own URL, written exactly the same'
    );
  if (!Array.isArray(d.redirect_uris) || d.redirect_uris.length === 0)
    return `the document at ${id} must list the app's redirect_uris (an array of its exact redirect URIs)`;
  if (d.token_endpoint_auth_method !== undefined && d.token_endpoint_auth_method !== 'none')
    return (
      `the document at ${id} sets token_endpoint_auth_method ${String(d.token_endpoint_auth_method)}; ` +
      'only public apps (none, with PKCE) are accepted'
    );
  return null;
}

export interface ClientDocumentsOptions {
  allowLoopback: boolean;
  now: () => number;
  resolve?: Resolver;
  timeoutMs?: number;
}

type Entry = { properties: Record<string, unknown> } | { refused: string };

export class ClientDocuments {
  private readonly cache = new LRUCache<string, Entry>({ max: CACHE_MAX, ttlAutopurge: false });
  private readonly inFlight = new Map<string, Promise<Entry>>();

  constructor(private readonly opts: ClientDocumentsOptions) {}

  /** The app's metadata from its document (a fresh copy: the provider writes to it); throws ClientDocumentRefused. */
  async properties(id: string): Promise<Record<string, unknown>> {
    let entry = this.cache.get(id);
    if (!entry) {
      let pending = this.inFlight.get(id);
      if (!pending) {
        pending = this.load(id).finally(() => this.inFlight.delete(id));
        this.inFlight.set(id, pending);
      }
      entry = await pending;
    }
    if ('refused' in entry) throw new ClientDocumentRefused(entry.refused);
    return structuredClone(entry.properties);
  }

  private async load(id: string): Promise<Entry> {
    try {
      const { doc, keepS } = await this.fetch(id);
      const problem = documentProblem(doc, id);
      if (problem) throw new ClientDocumentRefused(problem);
      const d = doc as Record<string, unknown>;
      const properties = Object.fromEntries(USED.filter((k) => d[k] !== undefined).map((k) => [k, d[k]]));
      const entry = { properties };
      if (keepS > 0) this.cache.set(id, entry, { ttl: keepS * 1000 });
      return entry;
    } catch (err) {
      if (!(err instanceof ClientDocumentRefused)) throw err;
      const entry = { refused: err.message };
      this.cache.set(id, entry, { ttl: REFUSAL_KEEP_MS });
      return entry;
    }
  }

  private async fetch(id: string): Promise<{ doc: unknown; keepS: number }> {
    const url = checkClientIdUrl(id, this.opts.allowLoopback);
    const target = await vetAddress(url, this.opts.allowLoopback, this.opts.resolve ?? systemResolver);
    const timeoutMs = this.opts.timeoutMs ?? FETCH_TIMEOUT_MS;
    const lib = url.protocol === 'https:' ? https : http;
    const { status, headers, body } = await new Promise<{ status: number; headers: http.IncomingHttpHeaders; body: Buffer }>(
      (resolve, reject) => {
        const fail = (why: string) => {
          clearTimeout(timer);
          req.destroy();
          reject(new ClientDocumentRefused(`the client ID metadata document at ${id} ${why}`));
        };
        const req = lib.request(
          url,
          {
            method: 'GET',
            headers: { accept: 'application/json', 'user-agent': USER_AGENT },
            lookup: pinned(target.address, target.family),
            // A fresh connection: a pooled socket would skip the address check.
            agent: false,
          },
          (res) => {
            const status = res.statusCode ?? 0;
            if (status !== 200) {
              const redirect =
                status >= 300 && status < 400 ? ' (redirects are not followed: serve the document at the client_id URL itself)' : '';
              return fail(`answered HTTP ${status}, not 200${redirect}`);
            }
            const tooBig = `is larger than ${MAX_DOCUMENT_BYTES / 1024} KB; keep it to the app's metadata`;
            if (Number(res.headers['content-length'] ?? 0) > MAX_DOCUMENT_BYTES) return fail(tooBig);
            const chunks: Buffer[] = [];
            let size = 0;
            res.on('data', (chunk: Buffer) => {
              size += chunk.length;
              if (size > MAX_DOCUMENT_BYTES) return fail(tooBig);
              chunks.push(chunk);
            });
            res.on('end', () => {
              clearTimeout(timer);
              resolve({ status, headers: res.headers, body: Buffer.concat(chunks) });
            });
            res.on('error', () => fail('could not be read to its end'));
            res.on('aborted', () => fail('could not be read to its end'));
          },
        );
        const timer = setTimeout(() => fail(`did not arrive within ${timeoutMs / 1000} seconds`), timeoutMs);
        req.on('error', (err: NodeJS.ErrnoException) => fail(`could not be fetched (${err.code ?? err.message})`));
        req.end();
      },
    );
    let doc: unknown;
    try {
      doc = JSON.parse(body.toString('utf8'));
    } catch {
      throw new ClientDocumentRefused(`the client ID metadata document at ${id} is not JSON (answered HTTP ${status})`);
    }
    return { doc, keepS: keepSeconds(headers, this.opts.now()) };
  }
}
