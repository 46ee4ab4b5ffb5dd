// `npm run build`: what `n8n-node build` does (@n8n/node-cli 0.48.3), without that CLI's
// dependencies (most of them its AI templates' SDK, about 600 MB): a fresh dist/ from the
// package's own tsconfig, then the icons and the codex files n8n loads beside the compiled nodes.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');

fs.rmSync(path.join(root, 'dist'), { recursive: true, force: true });
try {
	execFileSync(process.execPath, [tsc, '-p', 'tsconfig.json'], { cwd: root, stdio: 'inherit' });
} catch {
	process.stderr.write('n8n-nodes-clinic-api: the TypeScript build failed (above)\n');
	process.exit(1);
}

/** The files n8n-node build copies: images, and JSON under a __schema__ folder. */
const isStatic = (rel) =>
	/\.(png|svg)$/.test(rel) || (rel.endsWith('.json') && rel.split(path.sep).includes('__schema__'));
let copied = 0;
(function walk(dir) {
	for (const entry of fs.readdirSync(path.join(root, dir), { withFileTypes: true })) {
		const rel = path.join(dir, entry.name);
		if (entry.isDirectory()) {
			if (!['dist', 'node_modules', 'test'].includes(rel)) walk(rel);
		} else if (isStatic(rel)) {
			fs.mkdirSync(path.join(root, 'dist', dir), { recursive: true });
			fs.copyFileSync(path.join(root, rel), path.join(root, 'dist', rel));
			copied++;
		}
	}
})('');
process.stdout.write(`n8n-nodes-clinic-api: built into dist/ (${copied} static files copied)\n`);
