// The tests' global setup (vitest.config.ts at the repository's root): installs n8n's engine
// before any worker loads it, when this run includes this package's tests.
import { resolve, sep } from 'node:path';
import type { TestProject } from 'vitest/node';

import { ENGINE_DIR } from './engine.mjs';
import { ensureEngine } from './install.mjs';

const PACKAGE_DIR = resolve(ENGINE_DIR, '../..') + sep;

export default async function setup(project: TestProject) {
	// Vitest has listed the run's files by now; a run of other files only does not need the engine.
	// (If it lists none, the engine is installed all the same.)
	const files = project.vitest.state.getPaths();
	if (files.length > 0 && !files.some((file) => resolve(file).startsWith(PACKAGE_DIR))) return;
	await ensureEngine();
}
