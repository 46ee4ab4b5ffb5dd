// The scopes (domain/scopes.ts) and the address rules (domain/allowed-ips.ts), pure: parsing as
// an operator or a form gives them (refusals naming the value and the valid choices), the stored
// forms, the bits of the hot path, the feed's event types, and matching addresses.
import { describe, expect, it } from 'vitest';
import { AddressRules, checkAllowedIps, parseAllowedIps, readStoredAllowedIps, storedAllowedIps } from '../../src/domain/allowed-ips.js';
import { EVENT_TYPES } from '../../src/collections/index.js';
import {
  DEFAULT_SCOPES,
  ALL_SCOPE_BITS,
  hasScope,
  parseScopes,
  readStoredScopes,
  SCOPE_TEXTS,
  SCOPES,
  scopeBits,
  storedScopes,
  visibleEventTypes,
} from '../../src/domain/scopes.js';
import { DomainError } from '../../src/errors.js';

function refusal(fn: () => unknown): DomainError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(DomainError);
    return err as DomainError;
  }
  throw new Error('not refused');
}

describe('scopes', () => {
  it('are six, each described for the reference and in both dashboard languages; a new key gets all but webhooks:write', () => {
    expect(SCOPES).toEqual(['citas:read', 'clientas:read', 'llamadas:read', 'eventos:read', 'contacto:read', 'webhooks:write']);
    expect(DEFAULT_SCOPES).toEqual(['citas:read', 'clientas:read', 'llamadas:read', 'eventos:read', 'contacto:read']);
    for (const s of SCOPES) {
      expect(SCOPE_TEXTS[s].reference.length).toBeGreaterThan(20);
      expect(SCOPE_TEXTS[s].es.label).not.toBe(SCOPE_TEXTS[s].en.label);
      expect(SCOPE_TEXTS[s].es.description).not.toBe(SCOPE_TEXTS[s].en.description);
    }
  });

  it('parse commas and spaces into the one order, each once', () => {
    expect(parseScopes('contacto:read,citas:read citas:read', 'f')).toEqual(['citas:read', 'contacto:read']);
    expect(parseScopes(' eventos:read , llamadas:read ', 'f')).toEqual(['llamadas:read', 'eventos:read']);
  });

  it('refuse unknown names and an empty list, naming them and the valid scopes, on the given field', () => {
    const e = refusal(() => parseScopes('citas:read,CITAS:READ,all', '--scopes'));
    expect(e.reason).toBe('invalid_input');
    expect(e.details.field).toBe('--scopes');
    expect(e.message).toContain('"CITAS:READ", "all"');
    expect(e.message).toContain(SCOPES.join(', '));
    expect(refusal(() => parseScopes(' , ', 'f')).message).toContain('at least one scope');
  });

  it('are stored space-separated; a name this version does not know is dropped when read back', () => {
    expect(storedScopes(['contacto:read', 'citas:read'])).toBe('citas:read contacto:read');
    expect(readStoredScopes('citas:read citas:write contacto:read')).toEqual(['citas:read', 'contacto:read']);
  });

  it('as bits: one per scope; the feed shows the event types of the readable collections', () => {
    expect(scopeBits([...SCOPES])).toBe(ALL_SCOPE_BITS);
    const bits = scopeBits(['citas:read', 'eventos:read']);
    expect(SCOPES.filter((s) => hasScope(bits, s))).toEqual(['citas:read', 'eventos:read']);
    expect(visibleEventTypes(bits)).toEqual(['cita.creada', 'cita.actualizada', 'cita.eliminada']);
    expect(visibleEventTypes(ALL_SCOPE_BITS)).toEqual([...EVENT_TYPES]);
    expect(visibleEventTypes(scopeBits(['eventos:read', 'contacto:read']))).toEqual([]);
  });
});

describe('allowed addresses', () => {
  it('read addresses and CIDR ranges of both families, in one canonical form, each once', () => {
    expect(checkAllowedIps('203.0.113.7, 203.0.113.0/24\n2001:DB8:0::1 ::ffff:198.51.100.9 2001:db8::/32 203.0.113.7 10.0.0.1/32')).toEqual(
      {
        ips: ['203.0.113.7', '203.0.113.0/24', '2001:db8::1', '198.51.100.9', '2001:db8::/32', '10.0.0.1'],
      },
    );
    expect(checkAllowedIps('')).toEqual({ ips: null });
    expect(checkAllowedIps(' None ')).toEqual({ ips: null });
  });

  it('refuse anything else, every bad entry at once, naming it and the valid forms', () => {
    expect(checkAllowedIps('1.2.3, 127.1, 1.2.3.4/33, 2001:db8::1/129, fe80::1%eth0, 1.2.3.4/024, 1.2.3.4/8/8, 203.0.113.9/24')).toEqual({
      problems: [
        { kind: 'malformed', entry: '1.2.3' },
        { kind: 'malformed', entry: '127.1' },
        { kind: 'malformed', entry: '1.2.3.4/33' },
        { kind: 'malformed', entry: '2001:db8::1/129' },
        { kind: 'malformed', entry: 'fe80::1%eth0' },
        { kind: 'malformed', entry: '1.2.3.4/024' },
        { kind: 'malformed', entry: '1.2.3.4/8/8' },
        { kind: 'host_bits', entry: '203.0.113.9/24', network: '203.0.113.0/24' },
      ],
    });
    const many = Array.from({ length: 51 }, (_, i) => `10.0.${i}.1`).join(',');
    expect(checkAllowedIps(many)).toEqual({ problems: [{ kind: 'too_many', count: 51 }] });
    const e = refusal(() => parseAllowedIps('office,10.0.0.0/8', '--allowed-ips'));
    expect(e.details.field).toBe('--allowed-ips');
    expect(e.message).toContain('"office"');
    expect(e.message).toContain('203.0.113.0/24');
    expect(e.message).toContain('none');
  });

  it('are stored comma-separated; none is null', () => {
    expect(storedAllowedIps(['203.0.113.0/24', '2001:db8::1'])).toBe('203.0.113.0/24,2001:db8::1');
    expect(readStoredAllowedIps('203.0.113.0/24,2001:db8::1')).toEqual(['203.0.113.0/24', '2001:db8::1']);
    expect(storedAllowedIps(null)).toBeNull();
    expect(readStoredAllowedIps(null)).toBeNull();
  });

  it('match the address a request came from: ranges, exact addresses, IPv4-mapped IPv6, nothing else', () => {
    const rules = new AddressRules(['203.0.113.0/24', '198.51.100.7', '2001:db8::/32']);
    const allowed = ['203.0.113.0', '203.0.113.255', '198.51.100.7', '::ffff:203.0.113.1', '2001:db8::1', '2001:db8:ffff::1'];
    const refused = ['203.0.114.0', '198.51.100.8', '2001:db9::1', '::1', '127.0.0.1', '', 'unknown', '::ffff:198.51.100.8'];
    for (const ip of allowed) expect(rules.allows(ip), ip).toBe(true);
    for (const ip of refused) expect(rules.allows(ip), ip).toBe(false);
    // asked again: the remembered answers are the same
    for (const ip of [...allowed, ...refused]) expect(rules.allows(ip), ip).toBe(allowed.includes(ip));
    expect(new AddressRules(['0.0.0.0/0']).allows('2001:db8::1')).toBe(false);
    expect(new AddressRules(['::/0']).allows('2001:db8::1')).toBe(true);
  });
});
