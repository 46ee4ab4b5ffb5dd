// The demo's records made safe for a sandbox (test mode): names stay realistic Spanish names, but
// every phone number is in a range reserved for fiction and every e-mail is at example.com, so
// nothing an integrator builds against a sandbox can call or mail a real person.
//  - clientas: Ofcom's drama numbers, +44 7700 900000 to 900999 (1,000 numbers);
//  - unknown callers: North America's 555-0100 to 555-0199 under ten area codes (1,000 numbers).
// Pure: the same records in give the same records out.
import type { ImportRecord } from '../domain/records.js';

export const FICTIONAL_CLIENTA_PHONES = 1_000;
const AREA_CODES = ['202', '212', '305', '312', '415', '617', '702', '713', '808', '917'] as const;

/** The n-th fictional clienta number (0 <= n < 1000): +447700900000 ... +447700900999. */
export function fictionalClientaPhone(n: number): string {
  return `+447700900${String(n % FICTIONAL_CLIENTA_PHONES).padStart(3, '0')}`;
}

/** The n-th fictional caller number: +1 <area> 555 0100 ... 0199. */
export function fictionalCallerPhone(n: number): string {
  const i = n % (AREA_CODES.length * 100);
  return `+1${AREA_CODES[Math.floor(i / 100)]}5550${100 + (i % 100)}`;
}

/** Whether `phone` is one of the fictional numbers above. */
export function isFictionalPhone(phone: string): boolean {
  return /^\+447700900\d{3}$/.test(phone) || /^\+1\d{3}55501\d{2}$/.test(phone);
}

/** An e-mail's local part at example.com (the domain reserved for examples, RFC 2606). */
export function fictionalEmail(email: string | null): string | null {
  if (email === null) return null;
  const at = email.lastIndexOf('@');
  return `${at < 0 ? email : email.slice(0, at)}@example.com`;
}

/**
 * The demo's records with fictional phones and e-mails. A clienta's number maps to the same
 * fictional number wherever it appears (her calls), so calls stay linked by their number.
 */
export function* fictional(records: Iterable<ImportRecord>): Generator<ImportRecord> {
  const phones = new Map<string, string>();
  let clientas = 0;
  let callers = 0;
  for (const r of records) {
    if (r.type === 'clienta') {
      let phone = phones.get(r.telefono);
      if (phone === undefined) phones.set(r.telefono, (phone = fictionalClientaPhone(clientas++)));
      yield { ...r, telefono: phone, email: fictionalEmail(r.email) };
    } else if (r.type === 'llamada') {
      let phone = phones.get(r.telefono_caller);
      if (phone === undefined) phones.set(r.telefono_caller, (phone = fictionalCallerPhone(callers++)));
      yield { ...r, telefono_caller: phone };
    } else yield r;
  }
}
