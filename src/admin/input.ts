// Every form field, query parameter and path parameter of the dashboard, checked before any
// route sees it: text no database can hold (NUL, other control characters, unpaired surrogates)
// or far longer than any field needs is refused with a 400 page, before a query could fail on it
// (`email=a%00b` on the sign-in form was a 500 page on PostgreSQL). Routes keep their own,
// narrower checks (a key's name, the e-mail's length).
import type { FastifyRequest } from 'fastify';
import { textProblem } from '../domain/text.js';
import { DomainError } from '../errors.js';

/** No dashboard field is longer (passwords are capped at 1024 by the sign-in route itself). */
export const MAX_FIELD_LENGTH = 4096;
/** The message of the DomainError, which errors.ts renders as its own page. */
export const UNUSABLE_TEXT = 'a field holds text that cannot be stored';

function check(source: unknown): void {
  if (source === null || typeof source !== 'object') return;
  for (const [name, raw] of Object.entries(source as Record<string, unknown>)) {
    for (const value of Array.isArray(raw) ? raw : [raw]) {
      // Tab, LF and CR are fine in a form field; names are checked as strictly as values.
      if (typeof value !== 'string') continue;
      if (textProblem(value, MAX_FIELD_LENGTH, true) !== null || textProblem(name, MAX_FIELD_LENGTH) !== null) {
        throw new DomainError('invalid_input', UNUSABLE_TEXT, { field: name });
      }
    }
  }
}

/** A preValidation hook: the body is parsed by then. */
export async function refuseUnusableInput(req: FastifyRequest): Promise<void> {
  check(req.query);
  check(req.params);
  check(req.body);
}
