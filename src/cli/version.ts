import fs from 'node:fs';

/** The package's version, from package.json (two levels up from src/cli/ and from dist/cli/ alike). */
export function packageVersion(): string {
  const pkg = JSON.parse(fs.readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
  return pkg.version;
}
