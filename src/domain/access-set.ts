// The client access record stores each distinct set of disclosed clientas once (migration 012):
// a response names its set by an id derived from what it holds, so the thousandth poll of the
// same page adds one 16-byte column to its log row instead of a hundred access rows. The id is a
// digest of the clinic, the UTC day and the clientas as the response listed them: the same page
// of one clinic and day shares it, and a set is never referenced after its day, so retention can
// remove a set once the last log row naming it is gone without racing a writer about to reuse it.
import { hash } from 'node:crypto';

const DAY_MS = 86_400_000;

/** A clienta's UUID as the 16 bytes the access record stores (null: not a UUID, not recorded). */
export function clientaBytes(id: string): Buffer | null {
  const hex = id.replace(/-/g, '');
  return /^[0-9a-fA-F]{32}$/.test(hex) ? Buffer.from(hex, 'hex') : null;
}

/** The UUID text of 16 stored bytes. */
export function clientaUuid(b: Uint8Array): string {
  const h = Buffer.from(b).toString('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

/** A set of disclosed clientas: its id, and its members (no repeats). */
export interface AccessSet {
  id: Buffer;
  clientas: string[];
}

/**
 * The set a response of `clinicId` at `atMs` disclosed, or null when it disclosed nobody. The
 * first 16 bytes of SHA-256: a collision between two sets of one clinic is as likely as guessing
 * a random UUID. Computed for every logged response (by the request log's record(), a few µs for
 * 100 ids), so the ids are digested as the text they are, in the order the response had
 * them: the same page read again (what polling does) has the same order and shares the set; the
 * same clientas in another order make a set of their own, which costs only its rows. Only a set
 * being stored is turned into bytes (an id that is not a UUID left out: clientaBytes).
 */
export function accessSet(clinicId: string, atMs: number, clientaIds: Iterable<string>): AccessSet | null {
  // What the API's handlers report is a Set already (http/disclosure.ts).
  const clientas = clientaIds instanceof Set ? [...(clientaIds as Set<string>)] : [...new Set(clientaIds)];
  if (clientas.length === 0) return null;
  const digest = hash('sha256', `${clinicId}\n${Math.floor(atMs / DAY_MS)}\n${clientas.join(',')}`, 'buffer');
  return { id: digest.subarray(0, 16), clientas };
}
