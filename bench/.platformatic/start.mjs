// Platformatic DB for the benchmark's `platformatic` case, started as its programmatic API
// documents it (create + start) on platformatic.json beside this file: its generated REST and
// GraphQL APIs with their defaults, no migrations, logging at warn as the service runs.
// Started and stopped (SIGTERM) by bench/lib/platformatic.ts.
import { create } from '@platformatic/db';

const app = await create(import.meta.dirname);
await app.start({ listen: true });
for (const sig of ['SIGTERM', 'SIGINT']) {
  process.once(sig, () => {
    app.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  });
}
