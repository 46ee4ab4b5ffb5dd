// Where a webhook may go (SSRF protection): https:// URLs whose host resolves only to public
// unicast addresses. Checked when an endpoint is created (a clear refusal) and again at every
// delivery, where the request then connects to exactly the address that was checked (send.ts
// pins it), so a DNS answer that changes between the check and the connection (rebinding) cannot
// reach a private address. WEBHOOK_ALLOW_PRIVATE=true lifts the address rule and allows plain
// http:// (tests, receivers on a private network).
import { lookup } from 'node:dns/promises';
import net from 'node:net';
import ipaddr from 'ipaddr.js';
import { DomainError } from '../../errors.js';

export const MAX_URL_LENGTH = 2_000;

/**
 * Why a destination is refused, as a stable code (the dashboard translates it, the CLI prints the
 * message): `not_https` without WEBHOOK_ALLOW_PRIVATE, `not_http` (neither https:// nor http://) with it.
 */
export type Refusal = 'invalid_url' | 'not_https' | 'not_http' | 'userinfo' | 'private_address' | 'unresolvable';

/**
 * The way out of an http:// or private-address refusal, named in its message: the operator's
 * variable, which the server (its deliveries) and the clinic-api command (create, test) each read
 * from their own environment.
 */
export const ALLOW_PRIVATE_HINT =
  'for a receiver on this machine or a private network (tests, internal systems), set WEBHOOK_ALLOW_PRIVATE=true in the environment of ' +
  'the server and of the clinic-api command (docs/webhooks.md, "Try webhooks locally")';

export class DestinationRefused extends DomainError {
  constructor(
    readonly refusal: Refusal,
    message: string,
  ) {
    super('invalid_input', message, { field: 'url' });
  }
}

/**
 * The class of an address: 'public' for global unicast, else the range it belongs to (loopback,
 * private, linkLocal (the cloud metadata address 169.254.169.254 among them), uniqueLocal
 * (fd00:ec2::254 among them), carrierGradeNat, multicast, unspecified, reserved, and the IPv6 forms
 * that embed IPv4 (6to4, teredo, rfc6052, an IPv4-mapped address classed as its IPv4)).
 */
export function addressClass(address: string): string {
  let parsed: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    parsed = ipaddr.parse(address.replace(/^\[|\]$/g, '').replace(/%.*$/, ''));
  } catch {
    return 'invalid';
  }
  if (parsed.kind() === 'ipv6' && (parsed as ipaddr.IPv6).isIPv4MappedAddress()) parsed = (parsed as ipaddr.IPv6).toIPv4Address();
  const range = parsed.range();
  return range === 'unicast' ? 'public' : range;
}

export function isPublicAddress(address: string): boolean {
  return addressClass(address) === 'public';
}

/** The URL, parsed and checked in form (scheme, no credentials); addresses are checked by vetHost. */
export function checkUrl(raw: string, allowPrivate: boolean): URL {
  const text = raw.trim();
  if (text.length === 0 || text.length > MAX_URL_LENGTH)
    throw new DestinationRefused('invalid_url', `url must be an https:// URL of at most ${MAX_URL_LENGTH} characters`);
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new DestinationRefused('invalid_url', `url is not a valid URL: "${text.slice(0, 100)}" (e.g. https://example.com/webhooks)`);
  }
  if (url.protocol !== 'https:' && !(allowPrivate && url.protocol === 'http:')) {
    if (allowPrivate) {
      throw new DestinationRefused('not_http', `url must start with https:// or http:// (got ${url.protocol}//)`);
    }
    throw new DestinationRefused(
      'not_https',
      `url must start with https:// (got ${url.protocol}//): webhooks carry clients' data and are only sent ` +
        `encrypted; ${ALLOW_PRIVATE_HINT}`,
    );
  }
  if (url.username !== '' || url.password !== '') {
    throw new DestinationRefused(
      'userinfo',
      'url must not contain a user name or password (user:pass@): use the signature to authenticate deliveries',
    );
  }
  if (url.hostname === '') throw new DestinationRefused('invalid_url', 'url has no host');
  url.hash = '';
  return url;
}

export type Resolver = (host: string) => Promise<{ address: string; family: number }[]>;

/** The system resolver, every address (A and AAAA), as a connection would see them. */
export const systemResolver: Resolver = (host) => lookup(host, { all: true, verbatim: true });

/**
 * The address a delivery to `url` connects to: the host's addresses, every one of which must be
 * public (one private answer among public ones is refused: a resolver may hand out either).
 */
export async function vetHost(
  url: URL,
  allowPrivate: boolean,
  resolve: Resolver = systemResolver,
): Promise<{ address: string; family: number }> {
  const host = url.hostname.replace(/^\[|\]$/g, '');
  let addresses: { address: string; family: number }[];
  if (net.isIP(host)) {
    addresses = [{ address: host, family: net.isIP(host) }];
  } else {
    try {
      addresses = await resolve(host);
    } catch (err) {
      throw new DestinationRefused(
        'unresolvable',
        `url's host ${host} does not resolve (${(err as NodeJS.ErrnoException).code ?? 'DNS error'})`,
      );
    }
    if (addresses.length === 0) throw new DestinationRefused('unresolvable', `url's host ${host} has no address`);
  }
  if (!allowPrivate) {
    const bad = addresses.find((a) => !isPublicAddress(a.address));
    if (bad) {
      throw new DestinationRefused(
        'private_address',
        `url's host ${host} resolves to ${bad.address} (${addressClass(bad.address)}), which is not a public address: webhooks may not ` +
          `reach private, loopback, link-local or metadata addresses; ${ALLOW_PRIVATE_HINT}`,
      );
    }
  }
  return addresses[0]!;
}
