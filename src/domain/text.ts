// Text a request may carry but the databases cannot hold (or hold only mangled): NUL, which
// PostgreSQL refuses in text ("invalid byte sequence for encoding UTF8: 0x00") and which would
// otherwise be a 500, the other control characters, which no parameter or form field has a use
// for, and unpaired UTF-16 surrogates, which cannot be encoded as UTF-8 at all. Input that holds
// them is refused as a 400 naming the field, before any query runs.

/** Every control character (C0, DEL, C1). */
const CONTROL = /\p{Cc}/u;
/** Control characters but tab, line feed and carriage return (multi-line form fields keep them). */
const CONTROL_BUT_WHITESPACE = /[^\P{Cc}\t\n\r]/u;
/** A high surrogate not followed by a low one, or a low one not preceded by a high one. */
const UNPAIRED_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

export type TextProblem = 'control_character' | 'unpaired_surrogate' | 'too_long';

/** What makes `value` unfit to store, or null. `allowWhitespace`: tab, LF and CR are fine. */
export function textProblem(value: string, maxLength: number, allowWhitespace = false): TextProblem | null {
  if (value.length > maxLength) return 'too_long';
  if (UNPAIRED_SURROGATE.test(value)) return 'unpaired_surrogate';
  if ((allowWhitespace ? CONTROL_BUT_WHITESPACE : CONTROL).test(value)) return 'control_character';
  return null;
}

/**
 * The first control character of `value` that text may not hold, as U+XXXX (tab, LF and CR
 * allowed when `allowWhitespace`); null when there is none. For messages that name it: the
 * import's text fields (services/import-lines.ts) refuse these, as the API's parameters do.
 */
export function controlCharacterIn(value: string, allowWhitespace = false): string | null {
  const m = (allowWhitespace ? CONTROL_BUT_WHITESPACE : CONTROL).exec(value);
  return m === null ? null : `U+${m[0].codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`;
}

/** For a message: what was wrong and how to fix it. */
export function describeTextProblem(name: string, problem: TextProblem, maxLength: number): string {
  switch (problem) {
    case 'too_long':
      return `${name} must be at most ${maxLength} characters`;
    case 'unpaired_surrogate':
      return `${name} is not valid Unicode (it holds an unpaired UTF-16 surrogate); send it as UTF-8, percent-encoded`;
    case 'control_character':
      return `${name} must not contain control characters (such as NUL, %00); remove them`;
  }
}
