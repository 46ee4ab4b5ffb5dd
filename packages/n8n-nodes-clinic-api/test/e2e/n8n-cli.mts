// n8n's command line, as the end-to-end test runs it: each command in its own process on the
// test's user folder and SQLite database.
import { spawn } from 'node:child_process';
import { createServer, type AddressInfo } from 'node:net';

export interface N8nRun {
	status: string;
	data: {
		resultData: {
			error?: { message: string };
			runData: Record<string, { data?: { main: { json: Record<string, unknown> }[][] } }[]>;
		};
	};
}

/** A port nothing listens on now. */
export async function freePort(): Promise<number> {
	const server = createServer();
	await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
	const { port } = server.address() as AddressInfo;
	await new Promise((done) => server.close(done));
	return port;
}

/** n8n's environment: its own user folder and SQLite database, quiet, community packages on. */
export async function n8nEnv(home: string, logLevel: string): Promise<NodeJS.ProcessEnv> {
	return {
		PATH: process.env.PATH,
		HOME: home,
		TZ: 'UTC',
		N8N_USER_FOLDER: home,
		N8N_ENCRYPTION_KEY: 'e2e-only-not-a-secret', // fixed, so the imported credential decrypts on execute
		DB_TYPE: 'sqlite',
		N8N_LOG_LEVEL: logLevel, // `execute` prints the run through the logger, at level info
		N8N_DIAGNOSTICS_ENABLED: 'false',
		N8N_VERSION_NOTIFICATIONS_ENABLED: 'false',
		N8N_ENFORCE_SETTINGS_FILE_PERMISSIONS: 'false',
		N8N_COMMUNITY_PACKAGES_ENABLED: 'true',
		N8N_UNVERIFIED_PACKAGES_ENABLED: 'true',
		N8N_RUNNERS_MODE: 'internal',
		N8N_RUNNERS_BROKER_PORT: String(await freePort()),
		N8N_PORT: String(await freePort()),
		N8N_LISTEN_ADDRESS: '127.0.0.1',
	};
}

export async function n8n(
	bin: string,
	home: string,
	args: string[],
	logLevel = 'warn',
): Promise<string> {
	const env = await n8nEnv(home, logLevel);
	return await new Promise((done, fail) => {
		const child = spawn(process.execPath, [bin, ...args], {
			env,
			stdio: ['ignore', 'pipe', 'pipe'],
		});
		let out = '';
		child.stdout.on('data', (b) => (out += b));
		child.stderr.on('data', (b) => (out += b));
		child.on('error', fail);
		child.on('close', (code) =>
			code === 0
				? done(out)
				: fail(new Error(`n8n ${args.join(' ')} exited ${code}:\n${out.slice(-6000)}`)),
		);
	});
}

/** The run `n8n execute --rawOutput` printed: the pretty-printed JSON among the log lines. */
export function parseRun(output: string): N8nRun {
	const lines = output.split('\n');
	const start = lines.indexOf('{');
	const end = lines.lastIndexOf('}');
	if (start < 0 || end < start) throw new Error(`no run in n8n's output:\n${output.slice(-6000)}`);
	return JSON.parse(lines.slice(start, end + 1).join('\n')) as N8nRun;
}

export const items = (r: N8nRun, node: string) =>
	(r.data.resultData.runData[node]?.[0]?.data?.main[0] ?? []).map((i) => i.json);
