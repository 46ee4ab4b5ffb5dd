// The change feed's follower: an async iterator of batches of events from a cursor (or 'now'),
// asking again at once while the API says `has_more`, else every `pollIntervalMs` with
// If-None-Match (a cheap 304 while nothing happened). Each batch carries the cursor to save with
// what was done with its events: a program that stops and starts again from that cursor misses
// nothing. On 410 cursor_expired the copy may have missed changes; the follower then takes the
// present's cursor FIRST, lets the caller read the collections again (onCursorExpired), and goes
// on from that cursor, so that what changed while the caller read is in the feed after it.
import { ClinicApiError, CursorExpiredError } from './errors.js';
import { sleep, type Sent, type Transport } from './transport.js';
import type { EventType, Evento, EventosList } from './types.js';

export interface FeedBatch {
  /** The events, oldest first (may be empty when only the cursor moved, e.g. past events `tipo` leaves out). */
  eventos: Evento[];
  /** Where to go on from after these events: save it with what you did with them. */
  cursor: string;
  /** More events were already waiting when this batch came. */
  hasMore: boolean;
}

export interface FollowOptions {
  /** A cursor saved from a batch, or 'now' to follow what happens from now on. */
  cursor: string;
  /** Only these event types (a comma-separated string or a list). */
  tipo?: string | readonly EventType[];
  /** Events per request, 1 to 500. Default 500. */
  limit?: number;
  /** Wait between polls while nothing is waiting (ms). Default 5000. */
  pollIntervalMs?: number;
  /** Stops the follower: the `for await` loop ends (without an error). */
  signal?: AbortSignal;
  /**
   * Called on 410 cursor_expired with the present's cursor, already taken: read the collections
   * again (your copy may lack changes), store them with `cursor`, and return; the follower goes on
   * from `cursor`. Without it, the follower throws CursorExpiredError.
   */
  onCursorExpired?: (info: { cursor: string; error: CursorExpiredError }) => void | Promise<void>;
}

export async function* follow(transport: Transport, opts: FollowOptions): AsyncGenerator<FeedBatch, void, undefined> {
  if (typeof opts.cursor !== 'string' || opts.cursor === '') {
    throw new TypeError("ClinicApi: eventos.follow() needs a cursor: one saved from a batch, or 'now'");
  }
  const pollIntervalMs = opts.pollIntervalMs ?? 5_000;
  const { signal } = opts;
  const tipo = Array.isArray(opts.tipo) ? opts.tipo.join(',') : (opts.tipo as string | undefined);
  let cursor = opts.cursor;
  let polled = null as { cursor: string; etag: string | undefined } | null;
  try {
    for (;;) {
      let sent: Sent<EventosList>;
      try {
        sent = await transport.get(
          '/api/v1/eventos',
          { query: { cursor, limit: opts.limit ?? 500, tipo } },
          { signal, ifNoneMatch: polled?.cursor === cursor ? polled.etag : undefined },
        );
      } catch (err) {
        if (!(err instanceof CursorExpiredError) || !opts.onCursorExpired) throw err;
        const now = await transport.get('/api/v1/eventos', { query: { cursor: 'now' } }, { signal });
        cursor = now.body!.next_cursor;
        await opts.onCursorExpired({ cursor, error: err });
        polled = null;
        continue;
      }
      if (sent.status === 200) {
        const page: EventosList = sent.body!;
        const moved: boolean = page.next_cursor !== cursor;
        // Asking again for the same cursor: its ETag makes "nothing new" a 304 with no body.
        polled = moved ? null : { cursor, etag: sent.etag };
        if (page.eventos.length > 0 || moved) {
          cursor = page.next_cursor;
          yield { eventos: page.eventos, cursor, hasMore: page.has_more };
        }
        if (page.has_more) continue;
      }
      await sleep(pollIntervalMs, signal);
    }
  } catch (err) {
    // Stopped by the caller's signal: the loop just ends.
    if (signal?.aborted && !(err instanceof ClinicApiError)) return;
    throw err;
  }
}
