// The one checker (src/domain/checker.ts) enforces every keyword a schema carries, or refuses the
// schema when it is compiled, that is when the service starts: a rule that is documented (in the
// OpenAPI document, in docs/import.md) is a rule that is applied.
import { Type } from '@sinclair/typebox';
import { describe, expect, it } from 'vitest';
import { compileChecker } from '../../src/domain/checker.js';
import type { ApiError } from '../../src/errors.js';
import { compileArgs } from '../../src/http/mcp/args.js';
import { compileQueryValidator, type ObjectSchema } from '../../src/http/query-validator.js';

describe('a schema with a rule the checker does not enforce fails to compile', () => {
  it.each([
    ['a misspelt keyword', { code: Type.String({ maxLenght: 5 }) }, /unknown keyword: "maxLenght"/],
    ['a keyword of a plugin that is not loaded', { day: Type.String({ format: 'date', formatMinimum: '2026-01-01' }) }, /formatMinimum/],
    ['a format nobody registered', { site: Type.String({ format: 'hostname' }) }, /unknown format "hostname"/],
  ])('%s', (_name, properties, reason) => {
    const schema = Type.Object(properties, { additionalProperties: false });
    expect(() => compileChecker('a test schema', schema)).toThrow(/^a test schema: the schema has a rule the checker does not enforce/);
    expect(() => compileChecker('a test schema', schema)).toThrow(reason);
    // the route's query validator and an MCP tool's arguments are compiled when they are set up
    expect(() => compileQueryValidator(schema as ObjectSchema)).toThrow(reason);
    expect(() => compileArgs('a_tool', schema)).toThrow(reason);
  });
});

describe('every keyword a query schema carries is enforced', () => {
  it('a pattern (a keyword the hand-written validator knew nothing of) refuses what it does not match', () => {
    const check = compileQueryValidator(
      Type.Object({ code: Type.String({ pattern: '^[A-Z]{3}$', maxLength: 3 }) }, { additionalProperties: false }) as ObjectSchema,
    );
    expect(check({ code: 'EUR' })).toEqual({ value: { code: 'EUR' } });
    const res = check({ code: 'eur' }) as { error: ApiError };
    expect(res.error.code).toBe('invalid_parameter');
    expect(res.error.param).toBe('code');
  });

  it('answers the first problem in the order the parameters were written', () => {
    const check = compileQueryValidator(
      Type.Object(
        { a: Type.Integer({ minimum: 1, maximum: 5 }), b: Type.String({ format: 'date' }) },
        { additionalProperties: false },
      ) as ObjectSchema,
    );
    expect((check({ b: 'x', a: '9' }) as { error: ApiError }).error.message).toBe('b must be a date written YYYY-MM-DD, e.g. 2026-03-01');
    expect((check({ a: '9', b: 'x' }) as { error: ApiError }).error.message).toBe('a must be an integer from 1 to 5');
    expect(check({ a: '05' })).toHaveProperty('error');
    expect(check({ a: '5', b: '2026-02-28' })).toEqual({ value: { a: 5, b: '2026-02-28' } });
  });
});
