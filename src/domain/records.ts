// The values the records and accounts are made of: ids, statuses, outcomes, plans, roles. The
// records themselves, in the shape of the import format (docs/import.md), are the collections'
// (src/collections/): import, the demo generator and the repositories all speak that shape.
import type { ImportRecord, DeletionRecord, EventType } from '../collections/index.js';

export type { ImportRecord, DeletionRecord, EventType };

/**
 * What a record id is: a UUID, written in any case and stored in lower case. The import checks its
 * lines' ids with it, and the API its path parameters (GET /api/v1/citas/{id} ...).
 */
export const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** A request id: an incoming X-Request-Id of this shape is kept, else the service makes a UUID. */
export const REQUEST_ID_RE = /^[A-Za-z0-9._:-]{1,128}$/;

export const ESTADOS = ['pendiente', 'confirmada', 'completada', 'cancelada', 'no_asistio'] as const;
export type Estado = (typeof ESTADOS)[number];

export const RESULTADOS = ['agendada', 'cancelada', 'info', 'transferida', 'sin_accion'] as const;
export type Resultado = (typeof RESULTADOS)[number];

export const PLANS = ['basic', 'pro', 'pro_total', 'enterprise', 'premium'] as const;
export type Plan = (typeof PLANS)[number];

export const ROLES = ['owner', 'staff', 'superadmin'] as const;
export type Role = (typeof ROLES)[number];
