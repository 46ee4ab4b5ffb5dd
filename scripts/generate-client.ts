// npm run generate:client: rewrites test/client/api.d.ts, the typed client's types, from the
// OpenAPI document the app serves now (tools/openapi-client.ts). Run it after changing a route
// or a schema; the suite fails until the committed file matches.
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { CLIENT_TYPES_FILE, clientTypes, liveOpenApiDocument } from '../tools/openapi-client.js';

const text = await clientTypes(await liveOpenApiDocument());
writeFileSync(CLIENT_TYPES_FILE, text);
process.stderr.write(`wrote ${fileURLToPath(CLIENT_TYPES_FILE)}\n`);
