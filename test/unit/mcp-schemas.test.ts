// The MCP tools' published schemas (src/http/mcp/schemas.ts): a nullable value of the API's
// schemas (`type: [T, "null"]`) is published as `anyOf` of T and null, with the same meaning,
// which clients that map schemas onto a one-type dialect accept (and the MCP Inspector does not
// warn about); the REST OpenAPI document keeps its own form.
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { describe, expect, it } from 'vitest';
import { Cita } from '../../src/collections/citas.js';
import { Clienta } from '../../src/collections/clientas.js';
import { TOOLS } from '../../src/http/mcp/server.js';
import { nullableAsAnyOf, standalone } from '../../src/http/mcp/schemas.js';

describe('MCP tool schemas', () => {
  it('a nullable value becomes anyOf: its annotations outside, its type’s keywords in its branch', () => {
    expect(
      nullableAsAnyOf({
        type: ['string', 'null'],
        format: 'date',
        pattern: '^2',
        description: 'A day; null: none',
        examples: ['2026-01-01'],
      }),
    ).toEqual({
      description: 'A day; null: none',
      examples: ['2026-01-01'],
      anyOf: [{ type: 'string', format: 'date', pattern: '^2' }, { type: 'null' }],
    });
    expect(nullableAsAnyOf({ type: 'string', minLength: 1 })).toEqual({ type: 'string', minLength: 1 });
    expect(nullableAsAnyOf({ type: ['integer', 'string'] })).toEqual({ type: ['integer', 'string'] });
  });

  it('no tool schema has a list of types, and each accepts and refuses what the REST schema does', () => {
    expect(JSON.stringify(TOOLS.map((t) => [t.inputSchema, t.outputSchema]))).not.toMatch(/"type":\[/);
    const ajv = new Ajv2020({ strict: false });
    addFormatsModule.default(ajv);
    const cita = {
      id: '0a000002-0000-4000-8000-000000000001',
      fecha_hora: '2026-03-29T10:00:00+02:00',
      cliente_nombre: 'Elena',
      telefono: null,
      servicio: 'Masaje',
      duracion_min: 60,
      precio: 35,
      moneda: 'EUR',
      estado: 'confirmada',
      profesional_nombre: 'Laura',
      sede_nombre: 'Centro',
      notas: null,
      created_at: '2026-03-01T09:00:00+01:00',
      updated_at: '2026-03-01T09:00:00.123+01:00',
    };
    const rest = ajv.compile(standaloneRest(Cita));
    const tool = ajv.compile(standalone(Cita));
    for (const value of [cita, { ...cita, telefono: '+34600000000', notas: 'x' }, { ...cita, telefono: 5 }, { ...cita, notas: '' }]) {
      expect(tool(value), JSON.stringify(value)).toBe(rest(value));
    }
    expect(tool({ ...cita, telefono: 5 })).toBe(false);
    const clienta = ajv.compile(standalone(Clienta));
    expect(clienta({ idioma: 7 })).toBe(false);
  });
});

/** The REST form: the TypeBox schema as JSON, without its id. */
function standaloneRest(schema: object): object {
  const { $id: _id, ...rest } = JSON.parse(JSON.stringify(schema)) as Record<string, unknown>;
  return rest;
}
