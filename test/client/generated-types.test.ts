// The committed client types (test/client/api.d.ts, and the SDK's packages/sdk/src/generated/openapi.ts)
// are exactly what openapi-typescript makes of the live document, so they cannot drift from the
// API: change a route or a schema and this fails until `npm run generate:client` is run and its
// result committed.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';
import { clientTypes, GENERATED_TYPES_FILES, liveOpenApiDocument } from '../../tools/openapi-client.js';

it('the committed client types are what openapi-typescript generates from the live document', async () => {
  const generated = await clientTypes(await liveOpenApiDocument());
  expect(generated.length).toBeGreaterThan(10_000);
  expect(GENERATED_TYPES_FILES.map((f) => fileURLToPath(f))).toEqual([
    expect.stringMatching(/test\/client\/api\.d\.ts$/),
    expect.stringMatching(/packages\/sdk\/src\/generated\/openapi\.ts$/),
  ]);
  for (const file of GENERATED_TYPES_FILES) {
    const committed = readFileSync(file, 'utf8');
    if (committed !== generated) {
      throw new Error(
        `${fileURLToPath(file)} is out of date with the OpenAPI document: run \`npm run generate:client\` and commit the result`,
      );
    }
    // the types are named after the document's components
    for (const name of ['Cita', 'Clienta', 'Llamada', 'CitasList', 'ClientasList', 'LlamadasList', 'Me', 'ErrorResponse']) {
      expect(committed).toMatch(new RegExp(`^        ${name}: \\{`, 'm'));
    }
  }
}, 60_000);
