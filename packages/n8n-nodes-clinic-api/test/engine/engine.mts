// Where n8n's engine for this package's tests lives: n8n-core (WorkflowExecute,
// PollTriggerExecutor, RoutingNode) and the n8n-workflow it runs, about 350 MB the service never
// loads. It is not a dev dependency, so `npm install` leaves it out: package.json and
// package-lock.json here pin it, and install.mts installs it into ./node_modules (git-ignored)
// the first time the package's type-check or tests need it. The tests load it from there.
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ENGINE_DIR = fileURLToPath(new URL('.', import.meta.url));

/** require() from the engine's folder: its n8n-core, and the n8n-workflow that n8n-core loads. */
export const engineRequire = createRequire(join(ENGINE_DIR, 'package.json'));
