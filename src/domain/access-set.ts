// The client access record stores each distinct set of disclosed clientas once (migration 012):
// a response names its set by an id derived from what it holds, so the thousandth poll of the
// same page adds one 16-byte column to its log row instead of a hundred access rows. The id is a
// digest of the clinic, the UTC day and what names the clientas: a list page's tag (its ETag: the
// same tag is the same page, so the same clientas in the same order; the page cache relies on
// the same fact) or else the ids as the response listed them. The same page of one clinic and
// day shares it, and a set is never referenced after its day, so retention can remove a set once
// the last log row naming it is gone without racing a writer about to reuse it.
import { hash } from 'node:crypto';
import { memo } from '../memo.js';

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

/** A set of disclosed clientas: its id, and its members as the response listed them (repeats are stored once). */
export interface AccessSet {
  id: Buffer;
  /** the id in hex, as the request log's writer keys the sets it holds */
  hex: string;
  clientas: readonly string[];
}

/** The id of a set named by `input` (the clinic, the day and what names the clientas). */
function setId(input: string): { id: Buffer; hex: string } {
  const id = hash('sha256', input, 'buffer').subarray(0, 16);
  return { id, hex: id.toString('hex') };
}

/**
 * The ids of sets named by a page's tag, remembered: an integration polls the same page again and
 * again, and the digest and its hex on every request were 3 % of the CPU of a page served from
 * the page cache (profiled). Ids named by the ids themselves (4 KB keys) are computed each time.
 */
const setIdOfTag = memo(1_000, setId);

/**
 * The set a response of `clinicId` at `atMs` disclosed, or null when it disclosed nobody. The
 * first 16 bytes of SHA-256: a collision between two sets of one clinic is as likely as guessing
 * a random UUID. Computed for every logged response (by the request log's record()), so it
 * digests as little as names the set: the page's tag when there is one (a few dozen bytes), else
 * the ids as the text they are, in the order the response had them (4 KB for 100 ids): the same
 * record or feed page read again has the same order and shares the set; the same clientas in
 * another order, or under another tag, make a set of their own, which costs only its rows. The
 * two kinds of input cannot meet: a tag is one quoted token, ids are listed after a marker that
 * never starts a tag. Only a set being stored is turned into bytes (an id that is not a UUID
 * left out: clientaBytes).
 */
export function accessSet(clinicId: string, atMs: number, clientas: readonly string[], tag: string | null): AccessSet | null {
  if (clientas.length === 0) return null;
  const day = Math.floor(atMs / DAY_MS);
  const { id, hex } = tag === null ? setId(`${clinicId}\n${day}\nids:${clientas.join(',')}`) : setIdOfTag(`${clinicId}\n${day}\n${tag}`);
  return { id, hex, clientas };
}
