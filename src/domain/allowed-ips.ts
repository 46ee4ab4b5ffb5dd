// A key's address restriction: the IPv4/IPv6 addresses and CIDR ranges it may be used from
// (none: anywhere). Read strictly (four-part decimal IPv4, no zone ids, a range with no bits set
// after its prefix), so what a clinic typed is what is enforced, and stored in one canonical form.
// Matching runs on the request's path for restricted keys only: a key's rules are parsed once (the
// cached key holds them), and the answer for each address seen is remembered.
import ipaddr from 'ipaddr.js';
import { DomainError } from '../errors.js';

/** The most entries one key may list. */
export const MAX_ALLOWED_IPS = 50;

export const ALLOWED_IPS_EXAMPLE = '203.0.113.7, 203.0.113.0/24, 2001:db8::/32';

export type AddressProblem =
  | { kind: 'malformed'; entry: string }
  /** a range with bits set after its prefix: `network` is the range it probably means */
  | { kind: 'host_bits'; entry: string; network: string }
  | { kind: 'too_many'; count: number };

type Address = ipaddr.IPv4 | ipaddr.IPv6;

const PREFIX_RE = /^(0|[1-9][0-9]{0,2})$/;

function addressOf(text: string): Address | null {
  if (text.includes(':')) {
    if (text.includes('%') || !ipaddr.IPv6.isValid(text)) return null;
    const a = ipaddr.IPv6.parse(text);
    return a.isIPv4MappedAddress() ? a.toIPv4Address() : a;
  }
  return ipaddr.IPv4.isValidFourPartDecimal(text) ? ipaddr.IPv4.parse(text) : null;
}

function written(a: Address): string {
  return a.kind() === 'ipv6' ? (a as ipaddr.IPv6).toRFC5952String() : a.toString();
}

/** One entry in its canonical form, or what is wrong with it. */
function canonicalEntry(entry: string): string | AddressProblem {
  const parts = entry.split('/');
  if (parts.length > 2) return { kind: 'malformed', entry };
  const mappedV6 = parts[0]!.includes(':');
  let address = addressOf(parts[0]!);
  if (address === null) return { kind: 'malformed', entry };
  if (parts.length === 1) return written(address);
  if (!PREFIX_RE.test(parts[1]!)) return { kind: 'malformed', entry };
  let prefix = Number(parts[1]);
  // ::ffff:203.0.113.0/120 is the IPv4 range 203.0.113.0/24.
  if (mappedV6 && address.kind() === 'ipv4') {
    if (prefix < 96 || prefix > 128) return { kind: 'malformed', entry };
    prefix -= 96;
  }
  const bits = address.kind() === 'ipv4' ? 32 : 128;
  if (prefix > bits) return { kind: 'malformed', entry };
  const network = networkOf(address, prefix);
  if (written(network) !== written(address)) return { kind: 'host_bits', entry, network: `${written(network)}/${prefix}` };
  address = network;
  return prefix === bits ? written(address) : `${written(address)}/${prefix}`;
}

function networkOf(a: Address, prefix: number): Address {
  const bytes = a.toByteArray();
  for (let i = 0; i < bytes.length; i++) {
    const keep = Math.max(0, Math.min(8, prefix - i * 8));
    bytes[i] = bytes[i]! & ((0xff << (8 - keep)) & 0xff);
  }
  return ipaddr.fromByteArray(bytes);
}

/**
 * A list as typed (commas, spaces or line breaks between entries). `null`: no restriction (an
 * empty text, or `none`). Either the canonical entries (deduplicated, in the order given) or
 * every problem found.
 */
export function checkAllowedIps(text: string): { ips: string[] | null } | { problems: AddressProblem[] } {
  const trimmed = text.trim();
  if (trimmed === '' || trimmed.toLowerCase() === 'none') return { ips: null };
  const entries = trimmed.split(/[\s,]+/).filter((e) => e !== '');
  const problems: AddressProblem[] = [];
  const ips: string[] = [];
  for (const entry of entries) {
    const c = canonicalEntry(entry);
    if (typeof c === 'string') {
      if (!ips.includes(c)) ips.push(c);
    } else problems.push(c);
  }
  if (ips.length > MAX_ALLOWED_IPS) problems.push({ kind: 'too_many', count: ips.length });
  return problems.length > 0 ? { problems } : { ips };
}

/** One problem in English (the CLI's message; the dashboard has its own words). */
export function describeAddressProblem(p: AddressProblem): string {
  switch (p.kind) {
    case 'malformed':
      return `${JSON.stringify(p.entry)} is not an IPv4 or IPv6 address or CIDR range`;
    case 'host_bits':
      return `${JSON.stringify(p.entry)} has bits set after its prefix: the range is ${p.network}`;
    case 'too_many':
      return `${p.count} entries is more than the ${MAX_ALLOWED_IPS} a key may have`;
  }
}

/** checkAllowedIps, refusing with a DomainError on `field` that names every bad entry and the valid forms. */
export function parseAllowedIps(text: string, field: string): string[] | null {
  const checked = checkAllowedIps(text);
  if ('ips' in checked) return checked.ips;
  throw new DomainError(
    'invalid_input',
    `${checked.problems.map(describeAddressProblem).join('; ')}. Give addresses and CIDR ranges separated by commas ` +
      `(e.g. ${ALLOWED_IPS_EXAMPLE}), or none for any address`,
    { field },
  );
}

/** Stored as the canonical entries separated by commas (api_keys.allowed_ips); null: any address. */
export function storedAllowedIps(ips: readonly string[] | null): string | null {
  return ips === null || ips.length === 0 ? null : ips.join(',');
}

export function readStoredAllowedIps(text: string | null): string[] | null {
  return text === null || text === '' ? null : text.split(',');
}

/** How many addresses' answers a key remembers (a fleet of callers is a handful of addresses). */
const SEEN_MAX = 256;

/** A key's rules, parsed once; `allows` answers for the address a request came from. */
export class AddressRules {
  private readonly rules: [Address, number][];
  private readonly seen = new Map<string, boolean>();

  constructor(readonly list: readonly string[]) {
    this.rules = list.map((entry) => {
      const [addr, prefix] = entry.split('/');
      const a = addressOf(addr!)!;
      return [a, prefix === undefined ? (a.kind() === 'ipv4' ? 32 : 128) : Number(prefix)];
    });
  }

  /** `ip` as the server saw it (Fastify's req.ip); an IPv4-mapped IPv6 address is its IPv4 address. */
  allows(ip: string): boolean {
    const known = this.seen.get(ip);
    if (known !== undefined) return known;
    let ok = false;
    if (ipaddr.isValid(ip)) {
      const a = ipaddr.process(ip);
      ok = this.rules.some(([net, prefix]) => net.kind() === a.kind() && a.match(net, prefix));
    }
    if (this.seen.size >= SEEN_MAX) this.seen.clear();
    this.seen.set(ip, ok);
    return ok;
  }
}
