// Subscriptions by API (POST, GET, DELETE /api/v1/webhooks): what the API adds to the endpoints
// of the dashboard and the CLI (endpoints.ts). An endpoint subscribed by a key belongs to the key's
// data (its clinic, in its mode), records the key (or the OAuth grant) that made it, receives only
// the event types that credential may read, and no contact details unless it may read them: a
// subscription never shows more than the feed would show the same credential.
import { createHash } from 'node:crypto';
import type { WebhookEndpointJson } from '../../domain/api-schemas.js';
import { EVENT_TYPES, RESOURCE_SCOPES, type EventType } from '../../collections/index.js';
import { eventTypeScope, hasScope, visibleEventTypes, type ScopeBits } from '../../domain/scopes.js';
import { DomainError } from '../../errors.js';
import { formatTimestamp } from '../../time.js';
import type { KeyMode } from '../key-rules.js';
import { endpointStatus, type EndpointRow } from './endpoints.js';

/** "*" as asked: every type the credential may read. */
export const ALL_TYPES = '*';

/**
 * The event types a subscription asks for, checked against what the credential may read (the
 * feed's rule): null for every type (the credential reads them all, and types added later are
 * sent too), else the list in the catalogue's order. A type it may not read is refused naming the
 * scope it needs; a credential that reads no event type cannot subscribe.
 */
export function chooseEventTypes(asked: readonly string[], bits: ScopeBits): EventType[] | null {
  const visible = visibleEventTypes(bits);
  if (asked.includes(ALL_TYPES)) {
    if (asked.length > 1)
      throw new DomainError('invalid_input', 'eventos is either ["*"] or a list of event types, not both', { field: 'eventos' });
    if (visible.length === 0)
      throw new DomainError(
        'insufficient_scope',
        `This API key may read no event type: a subscription needs ${Object.values(RESOURCE_SCOPES)
          .join(', ')
          .replace(/, ([^,]+)$/, ' or $1')}`,
        { field: Object.values(RESOURCE_SCOPES)[0]! },
      );
    return visible.length === EVENT_TYPES.length ? null : visible;
  }
  const unknown = asked.filter((t) => !(EVENT_TYPES as readonly string[]).includes(t));
  if (unknown.length > 0)
    throw new DomainError(
      'invalid_input',
      `eventos must be ["*"] or a list of: ${EVENT_TYPES.join(', ')}; not: ${unknown.map((t) => JSON.stringify(t)).join(', ')}`,
      { field: 'eventos' },
    );
  const outside = (asked as EventType[]).find((t) => !hasScope(bits, eventTypeScope(t)));
  if (outside !== undefined) {
    const scope = eventTypeScope(outside);
    throw new DomainError('insufficient_scope', `The event type ${outside} needs the scope ${scope}, which this API key does not have`, {
      field: scope,
    });
  }
  const chosen = EVENT_TYPES.filter((t) => asked.includes(t));
  return chosen.length === EVENT_TYPES.length ? null : chosen;
}

/** An endpoint as the API shows it: never its secret. */
export function subscriptionJson(e: EndpointRow, mode: KeyMode, timezone: string): WebhookEndpointJson {
  const estado = endpointStatus(e);
  return {
    id: e.id,
    url: e.url,
    eventos: e.event_types ?? [ALL_TYPES],
    modo: mode,
    descripcion: e.description,
    estado,
    motivo: estado === 'disabled' ? (e.disabled_reason ?? 'manual') : null,
    created_at: formatTimestamp(e.created_at, timezone),
  };
}

const sha256 = (text: string) => createHash('sha256').update(text).digest('base64url');

/** An Idempotency-Key as it is kept: hashed (it may be a secret of the client's choosing). */
export function idempotencyKeyHash(key: string): string {
  return sha256(`idempotency-key:${key}`);
}

/** A subscription's request as its Idempotency-Key remembers it: the same key with another one is refused. */
export function subscriptionRequestHash(r: { url: string; eventos: readonly string[]; descripcion: string | null }): string {
  return sha256(JSON.stringify([r.url, [...r.eventos].sort(), r.descripcion]));
}
