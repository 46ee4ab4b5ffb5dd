// The end-to-end test's installs: the pinned n8n into the cache folder (from the committed
// lockfile, once), and this package into an n8n user folder as n8n installs a community package.
import { execFile } from 'node:child_process';
import {
	copyFileSync,
	existsSync,
	mkdirSync,
	readdirSync,
	readFileSync,
	rmSync,
	writeFileSync,
} from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

import { lockDigest, npmChildEnv } from '../../../../tools/npm-child.js';

const HERE = dirname(fileURLToPath(import.meta.url));
const PKG = resolve(HERE, '../..');
export const ROOT = resolve(PKG, '../..');
const RUNNER = join(HERE, 'n8n');
export const N8N_VERSION = (
	JSON.parse(readFileSync(join(RUNNER, 'package.json'), 'utf8')) as {
		dependencies: { n8n: string };
	}
).dependencies.n8n;
export const run = promisify(execFile);

export const say = (line: string) => process.stdout.write(`[n8n e2e] ${line}\n`);
export async function timed<T>(what: string, work: () => Promise<T>): Promise<T> {
	const start = performance.now();
	const result = await work();
	say(`${what}: ${((performance.now() - start) / 1000).toFixed(1)} s`);
	return result;
}

async function npm(args: string[], cwd: string): Promise<void> {
	await run('npm', [...args, '--no-audit', '--no-fund', '--loglevel=error'], {
		cwd,
		env: npmChildEnv(),
		maxBuffer: 64 << 20,
	});
}

/** The pinned n8n in the cache folder, installed from the committed lockfile when absent or out of date. */
export async function installN8n(): Promise<string> {
	const cache = resolve(
		process.env.N8N_E2E_CACHE ??
			join(
				process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache'),
				'clinic-api',
				`n8n-${N8N_VERSION}`,
			),
	);
	if (!relative(ROOT, cache).startsWith('..'))
		throw new Error(`N8N_E2E_CACHE (${cache}) must be outside the repository`);
	const stamp = lockDigest(RUNNER);
	const bin = join(cache, 'node_modules', 'n8n', 'bin', 'n8n');
	const stampFile = join(cache, '.installed-from-lockfile');
	if (existsSync(bin) && existsSync(stampFile) && readFileSync(stampFile, 'utf8') === stamp) {
		say(`n8n ${N8N_VERSION}: cached in ${cache}`);
		return bin;
	}
	mkdirSync(cache, { recursive: true });
	rmSync(stampFile, { force: true });
	for (const file of ['package.json', 'package-lock.json'])
		copyFileSync(join(RUNNER, file), join(cache, file));
	await timed(`n8n ${N8N_VERSION}: npm ci --ignore-scripts into ${cache}`, () =>
		npm(['ci', '--ignore-scripts'], cache),
	);
	await timed('n8n: npm rebuild sqlite3', () => npm(['rebuild', 'sqlite3'], cache));
	writeFileSync(stampFile, stamp);
	return bin;
}

/** Builds and packs this package, and installs the tarball into `home`'s n8n as n8n installs a community package. */
export async function installPackage(home: string, work: string): Promise<void> {
	await timed('package: npm run build', () =>
		run('npm', ['run', 'build'], { cwd: PKG, env: { ...process.env, CI: 'true' } }),
	);
	const { stdout } = await run(
		'npm',
		['pack', '--pack-destination', work, '--json', '--ignore-scripts'],
		{ cwd: PKG },
	);
	const [packed] = JSON.parse(stdout) as [
		{ name: string; version: string; filename: string; files: unknown[] },
	];
	say(`package: npm pack -> ${packed.filename} (${packed.files.length} files)`);
	const nodes = join(home, '.n8n', 'nodes');
	const dir = join(nodes, 'node_modules', packed.name);
	mkdirSync(dir, { recursive: true });
	await run('tar', ['-xzf', join(work, packed.filename), '-C', dir, '--strip-components=1']);
	const manifestFile = join(dir, 'package.json');
	const {
		devDependencies: _d,
		peerDependencies: _p,
		optionalDependencies: _o,
		...manifest
	} = JSON.parse(readFileSync(manifestFile, 'utf8'));
	writeFileSync(manifestFile, JSON.stringify(manifest, null, 2));
	await npm(
		[
			'install',
			'--bin-links=false',
			'--install-strategy=shallow',
			'--ignore-scripts=true',
			'--package-lock=false',
		],
		dir,
	);
	writeFileSync(
		join(nodes, 'package.json'),
		JSON.stringify(
			{ name: 'installed-nodes', private: true, dependencies: { [packed.name]: packed.version } },
			null,
			2,
		),
	);
	say(`package: installed in ${relative(home, dir)} (${readdirSync(dir).join(', ')})`);
}
