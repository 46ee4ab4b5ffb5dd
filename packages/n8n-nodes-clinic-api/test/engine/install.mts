// Installs n8n's engine for the tests (engine.mts says what and where) from its lockfile, once:
// again only when the lockfile changes. The package's type-check runs this file first, and the
// tests' global setup calls ensureEngine(), so a fresh clone's `npm test` installs it on the way.
import { spawn } from 'node:child_process';
import {
	existsSync,
	mkdirSync,
	readFileSync,
	renameSync,
	rmSync,
	statSync,
	writeFileSync,
} from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

import { lockDigest, npmChildEnv, npmSaid } from '../../../../tools/npm-child.js';
import { ENGINE_DIR } from './engine.mjs';

const say = (line: string) => process.stdout.write(`n8n-nodes-clinic-api: ${line}\n`);
const shown = (path: string) => relative(process.cwd(), path) || '.';

// Inside node_modules, so `npm ci` (which empties node_modules first) removes it before anything
// else: it exists only after a complete install.
const STAMP = join(ENGINE_DIR, 'node_modules', '.installed-from-lockfile');
const LOCK = join(ENGINE_DIR, '.installing');

const installed = () => existsSync(STAMP) && readFileSync(STAMP, 'utf8') === lockDigest(ENGINE_DIR);

function alive(pid: number): boolean {
	try {
		process.kill(pid, 0);
		return true;
	} catch (error) {
		return (error as NodeJS.ErrnoException).code === 'EPERM';
	}
}

function lockAge(): number {
	try {
		return Date.now() - statSync(LOCK).mtimeMs;
	} catch {
		return 0;
	}
}

/**
 * The install lock (a folder: creating it is atomic), held by one process at a time across test
 * workers, runs and the type-check. A lock whose process is gone is taken over.
 */
async function lock(): Promise<() => void> {
	const waitUntil = Date.now() + 15 * 60_000;
	let waiting = false;
	for (;;) {
		try {
			mkdirSync(LOCK);
			writeFileSync(join(LOCK, 'pid'), String(process.pid));
			return () => rmSync(LOCK, { recursive: true, force: true });
		} catch (error) {
			if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
		}
		let owner = NaN;
		let stale = false;
		try {
			owner = Number(readFileSync(join(LOCK, 'pid'), 'utf8'));
			stale = Number.isInteger(owner) && owner > 0 && !alive(owner);
		} catch {
			// Created a moment ago, its pid not written yet; or never, if that process died at once.
			stale = lockAge() > 10_000;
		}
		if (stale) {
			// Renaming is atomic: of two processes that find the same dead owner, one takes it away.
			try {
				renameSync(LOCK, `${LOCK}.${process.pid}.stale`);
				rmSync(`${LOCK}.${process.pid}.stale`, { recursive: true, force: true });
			} catch {
				// Another process took it away first.
			}
			continue;
		}
		if (Date.now() > waitUntil)
			throw new Error(
				`n8n's engine for the tests: another install (process ${owner}) has held ${LOCK} for 15 minutes. ` +
					'If no install is running, delete that folder and run the tests again.',
			);
		if (!waiting) say(`waiting for another install of n8n's engine (process ${owner}) to finish`);
		waiting = true;
		await new Promise((resolve) => setTimeout(resolve, 500));
	}
}

/** `npm ci` here, quiet: npm's errors only. */
function npmCi(): Promise<{ code: number | null; output: string }> {
	const env = npmChildEnv();
	return new Promise((resolve, reject) => {
		const child = spawn(
			'npm',
			['ci', '--ignore-scripts', '--no-audit', '--no-fund', '--loglevel=error'],
			{
				cwd: ENGINE_DIR,
				env,
				stdio: ['ignore', 'pipe', 'pipe'],
				shell: process.platform === 'win32',
			},
		);
		let output = '';
		child.stdout.on('data', (chunk: Buffer) => (output += chunk));
		child.stderr.on('data', (chunk: Buffer) => (output += chunk));
		child.on('error', reject);
		child.on('close', (code) => resolve({ code, output }));
	});
}

/** Installs the engine from its lockfile unless that install is already in place. */
export async function ensureEngine(): Promise<void> {
	if (installed()) return;
	const release = await lock();
	try {
		// Another process may have installed it while this one waited.
		if (installed()) return;
		const pins = JSON.parse(readFileSync(join(ENGINE_DIR, 'package.json'), 'utf8')) as {
			dependencies: Record<string, string>;
		};
		say(
			`installing n8n's engine for the tests (n8n-core ${pins.dependencies['n8n-core']}, once) into ${shown(join(ENGINE_DIR, 'node_modules'))}`,
		);
		const start = performance.now();
		const { code, output } = await npmCi();
		if (code !== 0)
			throw new Error(
				`Could not install n8n's engine for the n8n package's tests: npm ci in ${shown(ENGINE_DIR)} ` +
					`exited with ${code}. The first run downloads it from the npm registry ` +
					'(`npm config get registry` says which): check the network or proxy, then run again. ' +
					`npm said:\n${npmSaid(output)}`,
			);
		writeFileSync(STAMP, lockDigest(ENGINE_DIR));
		say(`n8n's engine installed in ${((performance.now() - start) / 1000).toFixed(0)} s`);
	} finally {
		release();
	}
}

// `node --import tsx test/engine/install.mts`: the package's type-check runs it first.
if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
	ensureEngine().catch((error: Error) => {
		process.stderr.write(`${error.message}\n`);
		process.exit(1);
	});
}
