// n8n's date pickers give a wall-clock time without an offset ("2026-03-28T09:00:00") meant in
// the workflow's time zone; the API wants an RFC 3339 timestamp (offset or Z) for updated_since
// and a plain date for desde/hasta. Pure functions, no dependency: the zone's offset comes from
// Intl, so nothing here depends on the time zone of the machine n8n runs on.

const DATE = /^(\d{4})-(\d{2})-(\d{2})/;
const WALL_CLOCK = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.\d+)?)?)?$/;
const HAS_OFFSET = /(?:Z|[+-]\d{2}:?\d{2})$/i;

/** A parameter's value as text: a Luxon DateTime from an expression gives its ISO form. */
export function asText(value: unknown): string {
	if (
		value &&
		typeof value === 'object' &&
		typeof (value as { toISO?: unknown }).toISO === 'function'
	) {
		return String((value as { toISO: () => string }).toISO());
	}
	return String(value ?? '').trim();
}

/** `value`'s date part (YYYY-MM-DD) as written, or null when it does not start with one. */
export function datePart(value: unknown): string | null {
	const m = DATE.exec(asText(value));
	return m ? `${m[1]}-${m[2]}-${m[3]}` : null;
}

/** How far ahead of UTC the zone's clock is at the instant `utcMs`, in ms. */
function zoneOffsetMs(utcMs: number, timeZone: string): number {
	const parts = new Intl.DateTimeFormat('en-US', {
		timeZone,
		hourCycle: 'h23',
		year: 'numeric',
		month: '2-digit',
		day: '2-digit',
		hour: '2-digit',
		minute: '2-digit',
		second: '2-digit',
	}).formatToParts(new Date(utcMs));
	const get = (type: string) => Number(parts.find((p) => p.type === type)?.value);
	const wall = Date.UTC(
		get('year'),
		get('month') - 1,
		get('day'),
		get('hour'),
		get('minute'),
		get('second'),
	);
	return wall - Math.floor(utcMs / 1000) * 1000;
}

/**
 * An RFC 3339 timestamp for `value`: kept as given when it has an offset or Z, else read as a
 * wall-clock time (or a date, at midnight) in `timeZone` and given in UTC. Null when `value` is
 * neither. A time that a DST change skips is read with the offset before the change.
 */
export function toTimestamp(value: unknown, timeZone: string): string | null {
	const text = asText(value);
	if (HAS_OFFSET.test(text)) return Number.isNaN(Date.parse(text)) ? null : text;
	const m = WALL_CLOCK.exec(text);
	if (!m) return null;
	const [y, mo, d, h, mi, s] = m.slice(1).map((part) => Number(part ?? 0));
	const wall = Date.UTC(y, mo - 1, d, h, mi, s);
	// Date.UTC rolls over (13th month, 30 February, 25 o'clock): such a value is not a time.
	const back = new Date(wall);
	if (back.getUTCMonth() !== mo - 1 || back.getUTCDate() !== d || h > 23 || mi > 59 || s > 59)
		return null;
	let utc = wall - zoneOffsetMs(wall, timeZone);
	utc = wall - zoneOffsetMs(utc, timeZone);
	return new Date(utc).toISOString().replace('.000Z', 'Z');
}
