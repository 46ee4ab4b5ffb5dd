// Node versions and whether clinic-api supports them: package.json's engines,
// "^22.15.0 || >=24.0.0" (22.15: the OpenTelemetry packages' floor). npm (engines + engine-strict, test/cli/node-version.test.ts) and
// bin/clinic-api.js (its own check, test/cli/cli.test.ts) are both held to this one table.
export const NODE_VERSIONS: readonly (readonly [version: string, supported: boolean])[] = [
  ['20.20.2', false],
  ['22.14.0', false],
  ['22.15.0', true],
  ['23.11.1', false],
  ['24.0.0', true],
  ['25.2.0', true],
];

/** A module for `node --import` that makes this process report Node `version`. */
export function pretendNode(version: string): string {
  const code =
    `Object.defineProperty(process, 'version', { value: 'v${version}' });` +
    `Object.defineProperty(process.versions, 'node', { value: '${version}' });`;
  return `data:text/javascript,${encodeURIComponent(code)}`;
}
