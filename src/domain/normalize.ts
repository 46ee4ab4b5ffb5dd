// Search keys. Names are compared without case or accents ("maria" finds "María"), phones by
// their digits ("600 12" finds "+34600123456"). The same functions build the stored keys and
// the query, so both sides always agree.

export function normalizeName(s: string): string {
  return s
    .normalize('NFD')
    .replace(/\p{M}+/gu, '')
    .toLowerCase()
    .replace(/\s+/g, ' ')
    .trim();
}

export function phoneDigits(s: string): string {
  return s.replace(/\D+/g, '');
}

/** A query is a phone search when it holds digits and nothing but phone punctuation. */
export function looksLikePhone(q: string): boolean {
  return /\d/.test(q) && /^[\d\s+().\-/]+$/.test(q);
}
