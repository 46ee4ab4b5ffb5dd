// What an API key may read: its scopes. The one list of them, with what each grants in the API's
// reference (English, technical) and in the dashboard's two languages (plain words for a clinic
// owner choosing them). Everything else names scopes from here: the API's checks (each route
// declares its scope, http/plugins/api.ts), the OpenAPI document's security scheme (and, later,
// an OAuth scheme with the same list), the CLI's --scopes, the dashboard's checkboxes.
//
// On the hot path a key's scopes are a bit set (scopeBits), so a check is one AND, no allocation.
import { COLLECTIONS, collectionOfEvent, EVENT_TYPES, type Collection, type EventType } from '../collections/index.js';
import { DomainError } from '../errors.js';

export type Scope = Collection['scope'] | 'eventos:read' | 'contacto:read' | 'webhooks:write';
/** The scopes, in their one order: the collections' (src/collections/), then the feed's, the contact details' and the subscriptions'. */
export const SCOPES: readonly Scope[] = [
  ...Object.values(COLLECTIONS).map((c) => c.scope),
  'eventos:read',
  'contacto:read',
  'webhooks:write',
];

/**
 * What a new key (or an app that names no scope) gets when nobody chose: every scope that reads.
 * webhooks:write sends the clinic's data to a URL of the caller's choice, so it is only ever
 * chosen explicitly.
 */
export const DEFAULT_SCOPES: readonly Scope[] = SCOPES.filter((s) => s !== 'webhooks:write');

/** A scope in one of the dashboard's languages: a short name, and what it lets a program read. */
export interface ScopeWords {
  label: string;
  description: string;
}

export interface ScopeText {
  /** for the API's reference (OpenAPI security scheme, /llms.txt, the CLI's help) */
  reference: string;
  /** for the dashboard, in each of its languages (admin/locales use these) */
  es: ScopeWords;
  en: ScopeWords;
}

export const SCOPE_TEXTS: Readonly<Record<Scope, ScopeText>> = {
  ...(Object.fromEntries(Object.values(COLLECTIONS).map((c) => [c.scope, c.scopeText])) as Record<Collection['scope'], ScopeText>),
  'eventos:read': {
    reference:
      'GET /api/v1/eventos: the change feed, with the event types of the resources the key may read only ' +
      `(${Object.values(COLLECTIONS)
        .map((c) => `${c.singular}.* with ${c.scope}`)
        .join(', ')})`,
    es: {
      label: 'Cambios',
      description: 'Qué se creó, cambió o borró, solo de los datos que la clave puede leer (para mantener una copia al día).',
    },
    en: {
      label: 'Changes',
      description: 'What was created, changed or deleted, only of the data the key may read (to keep a copy up to date).',
    },
  },
  'contacto:read': {
    reference:
      'contact details in every record the key receives: telefono, email, telefono_caller and notas. Without it they are null, ' +
      'and q on /api/v1/clientas matches names only, never phone digits',
    es: {
      label: 'Datos de contacto',
      description: 'Teléfonos, correos electrónicos y notas de las citas. Sin este permiso se envían vacíos.',
    },
    en: { label: 'Contact details', description: 'Phone numbers, e-mail addresses and appointment notes. Without it they are sent empty.' },
  },
  'webhooks:write': {
    reference:
      'POST, GET and DELETE /api/v1/webhooks: subscribe a URL to the events of the types the key may read, list and remove ' +
      'subscriptions; never granted unless chosen',
    es: {
      label: 'Suscripciones a eventos',
      description: 'Crear y borrar webhooks que envían los cambios a una dirección web (Zapier, Make, n8n). Solo si lo eliges.',
    },
    en: {
      label: 'Event subscriptions',
      description: 'Create and delete webhooks that send changes to a web address (Zapier, Make, n8n). Only when you choose it.',
    },
  },
};

export { CONTACT_FIELDS, RESOURCE_SCOPES } from '../collections/index.js';

/** A key's scopes as bits: one per scope, in SCOPES order. */
export type ScopeBits = number;

export const SCOPE_BIT: Readonly<Record<Scope, number>> = Object.freeze(
  Object.fromEntries(SCOPES.map((s, i) => [s, 1 << i])) as Record<Scope, number>,
);

export const ALL_SCOPE_BITS: ScopeBits = (1 << SCOPES.length) - 1;

export function scopeBits(scopes: readonly Scope[]): ScopeBits {
  let bits = 0;
  for (const s of scopes) bits |= SCOPE_BIT[s];
  return bits;
}

export function hasScope(bits: ScopeBits, scope: Scope): boolean {
  return (bits & SCOPE_BIT[scope]) !== 0;
}

export function isScope(value: string): value is Scope {
  return (SCOPES as readonly string[]).includes(value);
}

/** The scopes in their one order (SCOPES'), each once. */
export function canonicalScopes(scopes: Iterable<Scope>): Scope[] {
  const set = new Set(scopes);
  return SCOPES.filter((s) => set.has(s));
}

/** How a key's scopes are stored (api_keys.scopes): space-separated, in SCOPES order, as OAuth writes them. */
export function storedScopes(scopes: readonly Scope[]): string {
  return canonicalScopes(scopes).join(' ');
}

/**
 * A stored scope text read back. A name this version does not know (written by a newer one) is
 * left out: a key never gains what it was not given.
 */
export function readStoredScopes(text: string): Scope[] {
  return canonicalScopes(text.split(' ').filter(isScope));
}

/**
 * Scopes as an operator or a form gives them: names separated by commas and/or spaces. Refuses
 * an unknown name (naming it and the valid ones) and an empty list (a key must read something).
 */
export function parseScopes(text: string, field: string): Scope[] {
  const names = text
    .split(/[\s,]+/)
    .map((s) => s.trim())
    .filter((s) => s !== '');
  const unknown = names.filter((s) => !isScope(s));
  if (unknown.length > 0) {
    throw new DomainError(
      'invalid_input',
      `unknown scope${unknown.length > 1 ? 's' : ''} ${unknown.map((s) => JSON.stringify(s)).join(', ')}; the scopes ` +
        `are: ${SCOPES.join(', ')}`,
      { field },
    );
  }
  if (names.length === 0) throw new DomainError('invalid_input', `give at least one scope of: ${SCOPES.join(', ')}`, { field });
  return canonicalScopes(names as Scope[]);
}

/** The scope an event type needs on the feed: that of its record's collection. */
export function eventTypeScope(tipo: EventType): Scope {
  return collectionOfEvent(tipo).scope;
}

/** The event types a key with these scopes sees on the feed, in EVENT_TYPES order. */
export function visibleEventTypes(bits: ScopeBits): EventType[] {
  return EVENT_TYPES.filter((t) => hasScope(bits, eventTypeScope(t)));
}
