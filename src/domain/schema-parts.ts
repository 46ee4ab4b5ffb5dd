// The parts the API's schemas are made of (plain TypeBox, no HTTP): the named-schema helpers,
// ids, timestamps, phones, contact fields and the lists' paging parameters. The collections'
// schemas (src/collections/) and the rest of the API's (./api-schemas.ts) are built from them.
import { Type, type Static, type TObject, type TProperties, type TSchema } from '@sinclair/typebox';

/** An object schema with a name: `$id` (its key in components.schemas) and a description. */
export function named<T extends TProperties>(name: string, description: string, properties: T): TObject<T> {
  return Type.Object(properties, { $id: name, description });
}

/** A reference to a named schema, typed as that schema. */
export function ref<T extends TSchema>(schema: T) {
  if (!schema.$id) throw new Error('ref() needs a named schema');
  return Type.Unsafe<Static<T>>(Type.Ref(schema.$id));
}

/** `type: [T, "null"]`: OpenAPI 3.1 / JSON Schema nullability that fast-json-stringify serializes fast. */
export function Nullable<T extends TSchema>(schema: T) {
  return Type.Unsafe<T['static'] | null>({ ...schema, type: [schema.type, 'null'] });
}

/** A record id (the import's lines' ids too: domain/import-schemas.ts). */
export const Uuid = Type.String({ format: 'uuid', examples: ['24858e88-d2f1-40a6-9fc9-91500bc9b3cd'] });
export const Timestamp = Type.String({
  format: 'date-time',
  description: "RFC 3339 with the clinic's UTC offset, whole seconds",
  examples: ['2026-11-21T10:30:00+01:00'],
});
export const UpdatedAt = Type.String({
  format: 'date-time',
  description: "When the record last changed as the API shows it (the time of its latest event), RFC 3339 with the clinic's offset",
  examples: ['2026-11-21T10:30:00+01:00'],
});
export const DateOnly = Type.String({ format: 'date', examples: ['2026-11-21'] });
/** A phone number, E.164: the import's numbers too (domain/import-schemas.ts). */
export const Phone = Type.String({ pattern: '^\\+[0-9]{8,15}$', description: 'E.164', examples: ['+34600123456'] });
/** Said of each contact field (domain/scopes.ts, CONTACT_FIELDS): what a key without contacto:read gets. */
export const WITHOUT_CONTACT = 'null when the API key lacks the contacto:read scope';
/** A contact field: nullable, saying when it is null. */
export function Contact<T extends TSchema>(schema: T, description: string) {
  return Nullable({ ...schema, description: `${description}; ${WITHOUT_CONTACT}` } as T);
}
export const Text = (examples: string[], description?: string) => Type.String(description ? { description, examples } : { examples });

export const MAX_OFFSET = 2_147_483_647;
export const limitParam = (def: number) =>
  Type.Optional(Type.Integer({ minimum: 1, maximum: 500, default: def, description: `Page size, 1 to 500 (default ${def})` }));
export const offsetParam = Type.Optional(
  Type.Integer({ minimum: 0, maximum: MAX_OFFSET, default: 0, description: 'Records to skip, for paging' }),
);
export const dateParam = (description: string) => Type.Optional(Type.String({ format: 'date', description }));
// No `examples` on a query parameter: the document carries it as the parameter's `example`, and
// Swagger UI's "Try it out" fills the box with it, so the request /docs sends would use it
// (updated_since turns a list into another mode). An example goes in the description instead.
export const updatedSinceParam = Type.Optional(
  Type.String({
    format: 'date-time',
    description:
      'Only records changed at or after this RFC 3339 timestamp (with an offset or Z, e.g. 2026-03-28T09:00:00Z or ' +
      '2026-03-28T10:00:00+01:00; in a URL, send + as %2B), ordered by updated_at then id; ' +
      'the default date window does not apply (an explicit desde/hasta does). For tools that cannot keep a cursor; GET /api/v1/eventos ' +
      'is the complete change feed',
  }),
);
export const enumParam = <T extends string>(values: readonly T[], description: string) =>
  Type.Optional(Type.Unsafe<T>({ type: 'string', enum: [...values], description }));

export const paging = {
  total: Type.Integer({ minimum: 0, description: 'All records matching the filters, ignoring limit and offset', examples: [78] }),
  limit: Type.Integer({ description: 'The page size applied', examples: [100] }),
  offset: Type.Integer({ description: 'The offset applied', examples: [0] }),
};

export const Rango = named(
  'Rango',
  'The date range applied (local dates, both inclusive); with updated_since an end not given is null (no default window)',
  {
    desde: Nullable(DateOnly),
    hasta: Nullable(DateOnly),
  },
);
