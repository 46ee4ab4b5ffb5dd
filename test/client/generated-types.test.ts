// The committed client types (packages/sdk/src/generated/openapi.ts: the one copy, the SDK's and
// the typed client test's) are exactly what openapi-typescript makes of the live document, so they
// cannot drift from the API: change a route or a schema and this fails until
// `npm run generate:client` is run and its result committed.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';
import { CLIENT_TYPES_FILE, clientTypes, liveOpenApiDocument } from '../../tools/openapi-client.js';

it('the committed client types are what openapi-typescript generates from the live document', async () => {
  const generated = await clientTypes(await liveOpenApiDocument());
  expect(generated.length).toBeGreaterThan(10_000);
  expect(fileURLToPath(CLIENT_TYPES_FILE)).toMatch(/packages\/sdk\/src\/generated\/openapi\.ts$/);
  const committed = readFileSync(CLIENT_TYPES_FILE, 'utf8');
  if (committed !== generated) {
    throw new Error(
      `${fileURLToPath(CLIENT_TYPES_FILE)} is out of date with the OpenAPI document: run \`npm run generate:client\` and commit the result`,
    );
  }
  // the types are named after the document's components
  for (const name of ['Cita', 'Clienta', 'Llamada', 'CitasList', 'ClientasList', 'LlamadasList', 'Me', 'ErrorResponse']) {
    expect(committed).toMatch(new RegExp(`^        ${name}: \\{`, 'm'));
  }
}, 60_000);
