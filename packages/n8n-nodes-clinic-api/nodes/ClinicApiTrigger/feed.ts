import type { IDataObject, IPollFunctions } from 'n8n-workflow';

import { clinicApiRequest, MAX_PAGE_SIZE } from '../ClinicApi/shared/transport';

/** What the trigger keeps in the workflow's static data between polls. */
export interface FeedState extends IDataObject {
	/** The feed's next_cursor after the last page read. */
	cursor?: string;
	/** ocurrido_at of the last event read, or when the trigger started following (ISO 8601). */
	since?: string;
}

export interface FeedEvent extends IDataObject {
	id: string;
	tipo: string;
	ocurrido_at: string;
	datos: IDataObject;
}

/** The item the trigger emits instead of the events a 410 cursor_expired lost. */
export const RESYNC_TYPE = 'cursor_expired';

/**
 * Pages read in one poll at most: with a type filter a page may hold no event and still say
 * has_more (the feed reads a bounded stretch per request), so the pages are bounded too. What is
 * left waits for the next poll.
 */
export const MAX_PAGES_PER_POLL = 50;

interface FeedPage {
	eventos: FeedEvent[];
	next_cursor: string;
	has_more: boolean;
}

export type FeedRead =
	| { kind: 'events'; events: FeedEvent[] }
	| { kind: 'expired'; events: FeedEvent[]; since: string | null };

async function page(ctx: IPollFunctions, qs: IDataObject): Promise<FeedPage | null> {
	const { statusCode, body } = await clinicApiRequest(ctx, '/eventos', qs, [410]);
	if (statusCode === 410) return null;
	return {
		eventos: Array.isArray(body.eventos) ? (body.eventos as FeedEvent[]) : [],
		next_cursor: String(body.next_cursor),
		has_more: body.has_more === true,
	};
}

/** Starts following at the present: `cursor=now` gives no events and the present's cursor. */
export async function followFromNow(
	ctx: IPollFunctions,
	state: FeedState,
	tipo: string | undefined,
): Promise<void> {
	const now = await page(ctx, tipo ? { cursor: 'now', tipo } : { cursor: 'now' });
	if (!now) throw new Error('cursor=now answered 410');
	state.cursor = now.next_cursor;
	state.since = new Date().toISOString();
}

/**
 * Reads the events after `state.cursor` (of the types in `tipo`, all when undefined), up to
 * `max`, moving `state.cursor` past each page read. On 410 cursor_expired the position is lost:
 * it takes the present's cursor (before the workflow re-reads the collections, so nothing
 * that changes meanwhile is missed) and reports what was read before the 410.
 */
export async function readFeed(
	ctx: IPollFunctions,
	state: FeedState,
	tipo: string | undefined,
	max: number,
): Promise<FeedRead> {
	const events: FeedEvent[] = [];
	for (let pages = 0; pages < MAX_PAGES_PER_POLL && events.length < max; pages++) {
		const qs: IDataObject = {
			cursor: state.cursor,
			limit: Math.min(MAX_PAGE_SIZE, max - events.length),
		};
		if (tipo) qs.tipo = tipo;
		const answer = await page(ctx, qs);
		if (!answer) {
			const since = state.since ?? null;
			await followFromNow(ctx, state, tipo);
			return { kind: 'expired', events, since };
		}
		events.push(...answer.eventos);
		state.cursor = answer.next_cursor;
		const last = answer.eventos[answer.eventos.length - 1];
		if (last) state.since = last.ocurrido_at;
		if (!answer.has_more) break;
	}
	return { kind: 'events', events };
}

/** The oldest event the feed keeps (of the types in `tipo`), for a manual test; nothing is saved. */
export async function sampleEvents(
	ctx: IPollFunctions,
	tipo: string | undefined,
): Promise<FeedEvent[]> {
	let cursor: string | undefined;
	for (let pages = 0; pages < MAX_PAGES_PER_POLL; pages++) {
		const qs: IDataObject = { limit: 1 };
		if (cursor) qs.cursor = cursor;
		if (tipo) qs.tipo = tipo;
		const answer = await page(ctx, qs);
		if (!answer || answer.eventos.length > 0 || !answer.has_more) return answer?.eventos ?? [];
		cursor = answer.next_cursor;
	}
	return [];
}
