// What an app says about itself and what an authorization request carries, bounded and cleaned
// (services/oauth/limits.ts): the pure rules behind registration's invalid_client_metadata and
// the authorization endpoint's invalid_request.
import { describe, expect, it } from 'vitest';
import { authorizationParamProblem, cleanClientName, clientMetadataProblem } from '../../src/services/oauth/limits.js';

describe('OAuth limits', () => {
  it('cleanClientName removes bidi controls, zero-width and control characters, and folds spaces', () => {
    expect(cleanClientName('Clínica\u202E Demo\u200B\u200D Aurora\u2066\u2069 (official)\uFEFF')).toBe('Clínica Demo Aurora (official)');
    expect(cleanClientName('  Agenda\n\tPartner\u0007  ')).toBe('Agenda Partner');
    expect(cleanClientName('\u200B\u202E')).toBe('');
    expect(cleanClientName('Agenda Partner')).toBe('Agenda Partner');
  });

  it('clientMetadataProblem counts the cleaned name in characters, and bounds redirect URIs', () => {
    expect(
      clientMetadataProblem({ client_name: 'é'.repeat(100) + '\u200B'.repeat(50), redirect_uris: ['https://a.example/cb'] }),
    ).toBeNull();
    expect(clientMetadataProblem({ client_name: 'x'.repeat(101) })).toBe(
      'client_name is 101 characters long; at most 100 are accepted: use a shorter name',
    );
    expect(clientMetadataProblem({ client_name: 5 })).toBe('client_name must be a string');
    expect(clientMetadataProblem({ redirect_uris: Array.from({ length: 11 }, (_, i) => `https://a.example/${i}`) })).toMatch(
      /^at most 10 redirect_uris/,
    );
    expect(clientMetadataProblem({ redirect_uris: [`https://a.example/${'p'.repeat(2000)}`] })).toMatch(/at most 2000 characters/);
  });

  it('authorizationParamProblem names the parameter and its length; redirect_uri is bounded at registration', () => {
    expect(authorizationParamProblem({ state: 's'.repeat(1024), nonce: undefined })).toBeNull();
    expect(authorizationParamProblem({ state: 'ok', nonce: 'n'.repeat(2000) })).toBe(
      'nonce is 2000 characters long; at most 1024 are accepted',
    );
    expect(authorizationParamProblem({ redirect_uri: 'https://a.example/' + 'p'.repeat(1500) })).toBeNull();
  });
});
