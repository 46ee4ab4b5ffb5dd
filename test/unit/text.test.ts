// Text no database can hold (domain/text.ts), and the query validator refusing it for every parameter.
import { describe, expect, it } from 'vitest';
import { CitasQuery } from '../../src/collections/citas.js';
import { ClientasQuery } from '../../src/collections/clientas.js';
import { describeTextProblem, textProblem } from '../../src/domain/text.js';
import type { ApiError } from '../../src/errors.js';
import { compileQueryValidator, type ObjectSchema } from '../../src/http/query-validator.js';

describe('textProblem', () => {
  it.each([
    ['plain', 'María José', null],
    ['emoji (a surrogate pair)', 'ana 😀', null],
    ['NUL', 'a\u0000b', 'control_character'],
    ['ESC', 'a\u001bb', 'control_character'],
    ['DEL', 'a\u007fb', 'control_character'],
    ['a C1 control', 'a\u0085b', 'control_character'],
    ['a tab', 'a\tb', 'control_character'],
    ['a high surrogate alone', 'a\ud800', 'unpaired_surrogate'],
    ['a low surrogate alone', '\udc00a', 'unpaired_surrogate'],
    ['reversed pair', '\ude00\ud83d', 'unpaired_surrogate'],
  ])('%s', (_label, value, expected) => {
    expect(textProblem(value, 100)).toBe(expected);
  });

  it('lets tab, LF and CR through where whitespace is allowed, never NUL', () => {
    expect(textProblem('a\tb\r\nc', 100, true)).toBeNull();
    expect(textProblem('a\u0000b', 100, true)).toBe('control_character');
    expect(textProblem('a\u000bb', 100, true)).toBe('control_character');
  });

  it('measures length in UTF-16 units, as the schemas do', () => {
    expect(textProblem('x'.repeat(10), 10)).toBeNull();
    expect(textProblem('x'.repeat(11), 10)).toBe('too_long');
  });

  it('says what was wrong and how to fix it', () => {
    expect(describeTextProblem('q', 'control_character', 100)).toMatch(/^q must not contain control characters .*remove them$/);
    expect(describeTextProblem('name', 'too_long', 100)).toBe('name must be at most 100 characters');
    expect(describeTextProblem('q', 'unpaired_surrogate', 100)).toMatch(/surrogate.*UTF-8/);
  });
});

describe('the query validator refuses unstorable text in every parameter', () => {
  const check = (schema: unknown, query: Record<string, string>) => compileQueryValidator(schema as ObjectSchema)(query);

  it.each([
    [ClientasQuery, 'q', 'ana\u0000'],
    [ClientasQuery, 'q', 'ana\ud800'],
    [ClientasQuery, 'vip', 'true\u0000'],
    [CitasQuery, 'estado', '\u0000pendiente'],
    [CitasQuery, 'desde', '2026-03-01\u0000'],
    [CitasQuery, 'limit', '5\u0000'],
  ])('%#: %s', (schema, param, value) => {
    const res = check(schema, { [param]: value });
    expect('error' in res).toBe(true);
    const err = (res as { error: ApiError }).error;
    expect([err.code, err.param]).toEqual(['invalid_parameter', param]);
  });

  it('accepts what it accepted before', () => {
    expect(check(ClientasQuery, { q: 'María 😀', vip: 'true', limit: '5' })).toEqual({ value: { q: 'María 😀', vip: 'true', limit: 5 } });
  });
});
