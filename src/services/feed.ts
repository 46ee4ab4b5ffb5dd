// The change feed (GET /api/v1/eventos): a clinic's events after a cursor, oldest first.
//
// A cursor is a position in the clinic's event log: "every event up to seq S has been read". Seqs
// are assigned per clinic under its writer lock and committed in order, so the events after S are
// a gap-free range that only ever grows at its end (docs/architecture.md, "Following changes").
// The head (the clinic's last seq) is read BEFORE the events and bounds the range read: every
// event up to the head is already committed, so next_cursor never passes an event not yet seen.
//
// Under scopes (domain/scopes.ts) a key sees only the event types of the collections it may read:
// the plan's types are narrowed to those, through the same filter as an explicit `tipo`, so the
// cursor is complete for that subset exactly as it is for a `tipo` (the range bound is the same);
// asking for a type outside them is refused. Without contacto:read each event's datos has its
// contact details blanked (contact-view.ts).
import { createHash } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { DB } from '../db/schema.js';
import { FEED_DEFAULT_LIMIT, type EventosQuery } from '../domain/api-schemas.js';
import { EVENT_TYPES, type EventType } from '../collections/index.js';
import { eventTypeScope, hasScope, visibleEventTypes, type ScopeBits } from '../domain/scopes.js';
import { DomainError } from '../errors.js';
import { dataVersions, type DataVersions } from '../repos/clinics.js';
import { eventsAfter, type FeedRow } from '../repos/events.js';
import { memo } from '../memo.js';
import { formatTimestamp } from '../time.js';
import { strongEtag } from './conditional.js';
import { datosWithoutContact } from './contact-view.js';
import type { ClinicContext } from './shape.js';

/** Events read per request at most, matching `tipo` or not: a rare type never scans the whole log at once. */
export const FEED_SCAN = 5_000;

const CURSOR_VERSION = 'v1';
const CURSOR_RE = /^[A-Za-z0-9_-]{8,60}$/;
const CURSOR_TEXT = /^v1\.(0|[1-9][0-9]{0,15})\.([A-Za-z0-9_-]{8})$/;

/** 8 characters that tell one clinic's cursors from another's (not a secret: the key decides the clinic). */
const clinicTag = memo(100_000, (clinicId: string): string => createHash('sha256').update(clinicId).digest('base64url').slice(0, 8));

/** The opaque cursor of position `seq` in a clinic's log: a version, the seq and the clinic's tag, base64url. */
export function encodeCursor(seq: number, clinicId: string): string {
  return Buffer.from(`${CURSOR_VERSION}.${seq}.${clinicTag(clinicId)}`).toString('base64url');
}

/**
 * The position of a cursor: null when it is not one of ours (the round trip must give it back
 * exactly), 'other' when it is another clinic's.
 */
export function decodeCursor(cursor: string, clinicId: string): number | 'other' | null {
  return decoded(`${clinicId}\u0000${cursor}`);
}

/** Cursors decoded lately: a follower asks for the same one again and again while nothing happens. */
const decoded = memo(10_000, (key: string): number | 'other' | null => {
  const at = key.indexOf('\u0000'); // clinic ids hold none
  return decode(key.slice(at + 1), key.slice(0, at));
});

function decode(cursor: string, clinicId: string): number | 'other' | null {
  if (!CURSOR_RE.test(cursor)) return null;
  const m = CURSOR_TEXT.exec(Buffer.from(cursor, 'base64url').toString('latin1'));
  if (!m) return null;
  const seq = Number(m[1]);
  if (!Number.isSafeInteger(seq) || Buffer.from(`${CURSOR_VERSION}.${m[1]}.${m[2]}`).toString('base64url') !== cursor) return null;
  return m[2] === clinicTag(clinicId) ? seq : 'other';
}

export interface FeedPlan {
  /** null: from the oldest event kept; 'now': the present */
  from: number | 'now' | null;
  limit: number;
  /** null: every type */
  tipos: string[] | null;
  /** the key's view: with contact details in datos (contacto:read) or without */
  contact: boolean;
}

const invalid = (field: string, message: string) => new DomainError('invalid_input', message, { field });

/**
 * `scopes`: the key's. A `tipo` of a collection the key may not read is refused (DomainError
 * `insufficient_scope`, its field the scope it needs); without `tipo`, the types it may read.
 */
export function planFeed(q: EventosQuery, clinicId: string, scopes: ScopeBits): FeedPlan {
  let from: FeedPlan['from'] = null;
  if (q.cursor !== undefined) {
    const decoded = q.cursor === 'now' ? 'now' : decodeCursor(q.cursor, clinicId);
    if (decoded === null)
      throw invalid('cursor', 'cursor is not a cursor of this feed: send the next_cursor of an earlier answer as it was, or now');
    if (decoded === 'other') throw invalid('cursor', "cursor is another clinic's: a cursor follows the feed of the key's clinic only");
    from = decoded;
  }
  let tipos: string[] | null = null;
  if (q.tipo !== undefined) {
    const asked = q.tipo.split(',').map((t) => t.trim());
    const unknown = asked.filter((t) => !(EVENT_TYPES as readonly string[]).includes(t));
    if (unknown.length > 0) {
      throw invalid(
        'tipo',
        `tipo must be a comma-separated list of: ${EVENT_TYPES.join(', ')}; not: ${unknown.map((t) => JSON.stringify(t)).join(', ')}`,
      );
    }
    // One canonical order: the same set asked in any order is the same request (and ETag).
    tipos = EVENT_TYPES.filter((t) => asked.includes(t));
    const outside = tipos.find((t) => !hasScope(scopes, eventTypeScope(t as EventType)));
    if (outside !== undefined) {
      const needed = eventTypeScope(outside as EventType);
      throw new DomainError('insufficient_scope', `tipo ${outside} needs the scope ${needed}, which this API key does not have`, {
        field: needed,
      });
    }
  } else {
    const visible = visibleEventTypes(scopes);
    if (visible.length < EVENT_TYPES.length) tipos = visible;
  }
  return { from, limit: q.limit ?? FEED_DEFAULT_LIMIT, tipos, contact: hasScope(scopes, 'contacto:read') };
}

/** The clinic's feed bounds: its head and what retention removed. Read once per request, before anything else. */
export function feedBounds(db: Kysely<DB>, clinicId: string): Promise<DataVersions> {
  return dataVersions(db, clinicId);
}

function expired(detail: string): DomainError {
  return new DomainError('expired', detail, { field: 'cursor' });
}

/** The seq the page starts after; throws `expired` for a position the log no longer has. */
function startOf(plan: FeedPlan, b: DataVersions): number {
  if (plan.from === 'now') return b.eventsSeq;
  if (plan.from === null) return b.eventsExpired;
  if (plan.from < b.eventsExpired) throw expired('The events after this cursor are older than the feed keeps (at least 30 days)');
  // Only a database restored from a backup leaves a cursor ahead of the log.
  if (plan.from > b.eventsSeq) throw expired("This cursor is ahead of this clinic's feed (the data was restored from an earlier backup)");
  return plan.from;
}

/**
 * The page's tag: the clinic, the position, the page size, types and view, the log's head and
 * retention mark, and the clinic's data version. Events are only added at the head or removed at
 * the tail, except an erasure's rewrite of their datos, which bumps the data version: so the same
 * tag is the same page. Throws `expired` first, as the page would.
 */
export function feedEtag(ctx: ClinicContext, plan: FeedPlan, b: DataVersions): string {
  const after = startOf(plan, b);
  return strongEtag([
    'eventos',
    ctx.clinicId,
    ctx.timezone,
    after,
    plan.from === 'now' ? 'now' : plan.limit,
    plan.tipos?.join(',') ?? null,
    plan.contact ? 'contact' : 'no-contact',
    b.eventsSeq,
    b.eventsExpired,
    // An erasure rewrites past events' datos (services/erasure.ts) and bumps this: a page sent before is not this page.
    b.data,
  ]);
}

/**
 * The page as the API's JSON text. Each event's datos is stored as the JSON the lists would
 * have answered at the time, so it is copied, not parsed and written again.
 */
export async function feedPage(
  db: Kysely<DB>,
  ctx: ClinicContext,
  plan: FeedPlan,
  b: DataVersions,
  scan = FEED_SCAN,
  /** told the events returned and the clientas they disclose (the request log's access record) */
  disclosed?: (events: number, clientaIds: string[]) => void,
): Promise<string> {
  const after = startOf(plan, b);
  if (plan.from === 'now') return page('', encodeCursor(b.eventsSeq, ctx.clinicId), false);
  const through = Math.min(b.eventsSeq, after + scan);
  // A key that may read no collection sees no event: its cursor still moves through the range.
  const rows = plan.tipos?.length === 0 ? [] : await eventsAfter(db, ctx.clinicId, after, through, plan.tipos, plan.limit);
  // Retention removes a prefix of the log. It may have removed the start of this range after the
  // bounds were read: when the page does not begin with the event right after the cursor, ask again.
  const intact = rows.length > 0 && rows[0]!.seq === after + 1;
  if (!intact && after < through && after < (await dataVersions(db, ctx.clinicId)).eventsExpired) {
    throw expired('The events after this cursor are older than the feed keeps (at least 30 days)');
  }
  const next = rows.length === plan.limit ? rows[rows.length - 1]!.seq : through;
  if (disclosed !== undefined && rows.length > 0)
    disclosed(
      rows.length,
      rows.flatMap((r) => (r.clienta_id === null ? [] : [r.clienta_id])),
    );
  let eventos = '';
  for (const r of rows) {
    const event = plan.contact ? r : { ...r, datos: datosWithoutContact(r.tipo, r.datos) };
    eventos += `${eventos === '' ? '' : ','}${eventJson(event, ctx.timezone)}`;
  }
  return page(eventos, encodeCursor(next, ctx.clinicId), next < b.eventsSeq);
}

/** One event as the API's JSON text: the feed's element and a webhook's body alike. */
export function eventJson(r: Pick<FeedRow, 'id' | 'tipo' | 'ocurrido_at' | 'datos'>, timezone: string): string {
  return `{"id":"${r.id}","tipo":"${r.tipo}","ocurrido_at":"${formatTimestamp(r.ocurrido_at, timezone)}","datos":${r.datos}}`;
}

function page(eventos: string, nextCursor: string, hasMore: boolean): string {
  return `{"eventos":[${eventos}],"next_cursor":"${nextCursor}","has_more":${hasMore}}`;
}
