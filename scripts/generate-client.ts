// npm run generate:client: rewrites the typed client's types, test/client/api.d.ts and the SDK's
// packages/sdk/src/generated/openapi.ts, from the OpenAPI document the app serves now
// (tools/openapi-client.ts). Run it after changing a route or a schema; the suite fails until
// the committed files match.
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { clientTypes, GENERATED_TYPES_FILES, liveOpenApiDocument } from '../tools/openapi-client.js';

const text = await clientTypes(await liveOpenApiDocument());
for (const file of GENERATED_TYPES_FILES) {
  writeFileSync(file, text);
  process.stderr.write(`wrote ${fileURLToPath(file)}\n`);
}
