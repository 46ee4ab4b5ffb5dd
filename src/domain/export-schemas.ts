// The files of the exports that are not the API's own records, as TypeBox schemas: an entry of a
// client's access record (services/exports/clienta.ts). Their JSON Schemas travel in the ZIP
// beside the files they describe, with the API's record schemas (src/collections/).
import { Type } from '@sinclair/typebox';

const Nullable = (schema: { type: string } & Record<string, unknown>, description: string) =>
  Type.Unsafe<string | null>({ ...schema, type: [schema.type, 'null'], description });

/** One request that disclosed the client's data. */
export const AccessEntry = Type.Object(
  {
    time: Type.String({ format: 'date-time', description: "When it was answered, RFC 3339 with milliseconds and the clinic's offset" }),
    integration: Type.String({ description: 'The API key or the connected app that made it, by the name the clinic gave it' }),
    key_id: Nullable({ type: 'string' }, 'The API key, when made with one'),
    app_grant_id: Nullable({ type: 'string' }, 'The grant of the connected app, when made by one'),
    request_id: Type.String({ description: 'The request id the API returned (X-Request-Id)' }),
    method: Type.String(),
    endpoint: Type.String({ description: 'The path asked for, e.g. /api/v1/citas' }),
    query: Nullable({ type: 'string' }, 'The query string, secrets masked'),
    status: Type.Integer({ description: 'The HTTP status answered' }),
  },
  { $id: 'AccessEntry', additionalProperties: false, description: 'A request whose answer held the client’s personal data' },
);

export const ACCESS_COLUMNS = Object.keys(AccessEntry.properties);

/** A JSON Schema document (draft 2020-12) of `schema`, or of an array of it, standalone. */
export function schemaDocument(schema: object, title: string, asArray: boolean): string {
  const { $id: _id, ...rest } = schema as Record<string, unknown>;
  const body = asArray ? { type: 'array', items: rest } : rest;
  return `${JSON.stringify({ $schema: 'https://json-schema.org/draft/2020-12/schema', title, ...body }, null, 2)}\n`;
}
