// What start-up errors may show of DATABASE_URL, and which errors they leave alone. The errors
// themselves are met for real in test/cli/start-up.test.ts.
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { DomainError } from '../../src/errors.js';
import { explainListenError, explainRuntimeError, redactedDatabaseUrl, withoutDatabasePassword } from '../../src/startup-errors.js';

const PEPPER = 'unit-test-pepper-0123456789abcdefghijklmn';

describe('DATABASE_URL as shown', () => {
  it('keeps user, host, port and database; never the password or the query string', () => {
    expect(redactedDatabaseUrl('postgres://app:p%40ss@db.internal:6432/clinic?sslmode=require&password=x')).toBe(
      'postgres://app:***@db.internal:6432/clinic?…',
    );
    expect(redactedDatabaseUrl('postgresql://app@db/clinic')).toBe('postgresql://app@db/clinic');
    expect(redactedDatabaseUrl('postgres://db/clinic')).toBe('postgres://db/clinic');
  });

  it('a message from elsewhere loses the password, raw and percent-decoded', () => {
    const url = 'postgres://app:p%40ss%2Fw@db/clinic';
    expect(withoutDatabasePassword('failed for p@ss/w and p%40ss%2Fw', url)).toBe('failed for *** and ***');
    expect(withoutDatabasePassword('nothing secret', undefined)).toBe('nothing secret');
    expect(withoutDatabasePassword('nothing secret', 'postgres://app@db/clinic')).toBe('nothing secret');
  });
});

describe("errors that are not the operator's to fix are left as they are", () => {
  it('an unknown code, a non-error, a DomainError', () => {
    const sqlite = loadConfig({ DATA_DIR: '/tmp/x' });
    const pg = loadConfig({ DATABASE_URL: 'postgres://a:b@h/d', API_KEY_PEPPER: PEPPER });
    const odd = Object.assign(new Error('odd'), { code: 'XX000' });
    const domain = new DomainError('not_found', 'no such thing');
    for (const config of [sqlite, pg]) {
      expect(explainRuntimeError(odd, config)).toBe(odd);
      expect(explainRuntimeError('text', config)).toBe('text');
      expect(explainRuntimeError(domain, config)).toBe(domain);
      expect(explainListenError(odd, config)).toBe(odd);
    }
  });

  it('a host name with several addresses (AggregateError) is read by its first error', () => {
    const config = loadConfig({ DATABASE_URL: 'postgres://a:b@localhost:1/d', API_KEY_PEPPER: PEPPER });
    const inner = Object.assign(new Error('connect ECONNREFUSED ::1:1'), { code: 'ECONNREFUSED' });
    const err = explainRuntimeError(new AggregateError([inner]), config);
    expect(err).toBeInstanceOf(DomainError);
    expect((err as DomainError).details.field).toBe('DATABASE_URL');
    expect((err as DomainError).message).toContain('nothing listens on localhost:1');
  });
});
