// The client access record stores each distinct set of disclosed clientas once (migration 012):
// a response names its set by an id derived from what it holds, so the thousandth poll of the
// same page adds one 16-byte column to its log row instead of a hundred access rows. The id is a
// digest of the clinic, the UTC day and the clientas in byte order: equal sets of one clinic and
// day share it, and a set is never referenced after its day, so retention can remove a set once
// the last log row naming it is gone without racing a writer that is about to reuse it.
import { createHash } from 'node:crypto';

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

/** A set of disclosed clientas, ready to store: its id and its members (16 bytes each, in byte order, no repeats). */
export interface AccessSet {
  id: Buffer;
  clientas: Buffer[];
}

/**
 * The set a response of `clinicId` at `atMs` disclosed, or null when it disclosed nobody (ids that
 * are not UUIDs are not recorded). The first 16 bytes of SHA-256: a collision between two sets of
 * one clinic is as likely as guessing a random UUID.
 */
export function accessSet(clinicId: string, atMs: number, clientaIds: Iterable<string>): AccessSet | null {
  const clientas: Buffer[] = [];
  for (const id of clientaIds) {
    const b = clientaBytes(id);
    if (b !== null) clientas.push(b);
  }
  if (clientas.length === 0) return null;
  clientas.sort(Buffer.compare);
  const unique = clientas.filter((b, i) => i === 0 || !b.equals(clientas[i - 1]!));
  const h = createHash('sha256')
    .update(clinicId)
    .update('\n')
    .update(String(Math.floor(atMs / DAY_MS)))
    .update('\n');
  for (const b of unique) h.update(b);
  return { id: h.digest().subarray(0, 16), clientas: unique };
}
