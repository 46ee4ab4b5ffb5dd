// npm run generate:client: rewrites the client types, the SDK's packages/sdk/src/generated/openapi.ts
// (the one copy, which the tests' typed client imports too), from the OpenAPI document the app
// serves now (tools/openapi-client.ts). Run it after changing a route or a schema; the suite fails
// until the committed file matches, and the SDK's typecheck fails while it calls a path the
// document no longer has.
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { CLIENT_TYPES_FILE, clientTypes, liveOpenApiDocument } from '../tools/openapi-client.js';

const text = await clientTypes(await liveOpenApiDocument());
writeFileSync(CLIENT_TYPES_FILE, text);
process.stderr.write(`wrote ${fileURLToPath(CLIENT_TYPES_FILE)}\n`);
