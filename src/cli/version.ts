// The package's version, for --version (cli/main.ts) and what a backup records as its maker (cli/backup.ts).
import fs from 'node:fs';

/** The package's version, from package.json (two levels up from src/cli/ and from dist/cli/ alike). */
export function packageVersion(): string {
  const pkg = JSON.parse(fs.readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
  return pkg.version;
}
