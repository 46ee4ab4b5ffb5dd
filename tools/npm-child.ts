// npm run in a folder of its own: the pinned installs a test or the bench makes on first need
// (n8n's engine and the end-to-end n8n for the n8n package's tests, Platformatic DB for the
// bench), never part of the project's install.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

/**
 * The npm_* variables passed on: those that say how to reach the registry (npm reads the .npmrc
 * files itself). The others, set by the npm running this script, name the root project (its
 * folder, workspaces, the script).
 */
const REGISTRY_SETTING =
  /^npm_config_(registry|@[^:]+:registry|\/\/.+|proxy|https_proxy|noproxy|cafile|ca|strict_ssl|cache|userconfig|fetch_[a-z_]+)$/i;

/**
 * The environment of an npm run in another folder: this one's, without the root project's npm_*
 * variables, with this node first on PATH, and native add-ons built against this node's own
 * headers when it ships them (an .npmrc's nodedir may name another Node's).
 */
export function npmChildEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!/^npm_/i.test(k) || REGISTRY_SETTING.test(k)) env[k] = v;
  const bin = path.dirname(process.execPath);
  env.PATH = `${bin}${path.delimiter}${process.env.PATH ?? ''}`;
  const home = path.resolve(bin, '..');
  if (fs.existsSync(path.join(home, 'include', 'node', 'node_version.h'))) env.npm_config_nodedir = home;
  return env;
}

/** npm's error lines, without the stack trace and the error object it prints after them. */
export function npmSaid(output: string): string {
  return output
    .split('\n')
    .filter((line) => line.trim() && !/^npm error(\s*$| {2,}| \}$)/.test(line) && !/^\s+at /.test(line))
    .slice(0, 12)
    .join('\n');
}

/** A digest of `dir`'s package-lock.json, whatever its formatting: it names an install made from it. */
export function lockDigest(dir: string): string {
  const lock = JSON.stringify(JSON.parse(fs.readFileSync(path.join(dir, 'package-lock.json'), 'utf8')));
  return createHash('sha256').update(lock).digest('hex');
}
