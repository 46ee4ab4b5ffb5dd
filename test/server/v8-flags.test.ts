// The V8 flags the server sets when it starts (src/server.ts SERVER_V8_FLAGS): V8 takes a flag it
// does not know with an error printed and nothing else, so a Node whose V8 dropped one would lose
// its effect (the memory docs/benchmarks.md measures) unnoticed. This Node's V8 must take them all.
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { SERVER_V8_FLAGS } from '../../src/server.js';

describe('the server V8 flags', () => {
  it('are all known to this Node V8 and set without a word', () => {
    const script = `require('node:v8').setFlagsFromString(${JSON.stringify(SERVER_V8_FLAGS)}); console.log('set')`;
    const r = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8' });
    expect(r.stderr).toBe('');
    expect(r.stdout).toBe('set\n');
    const known = spawnSync(process.execPath, ['--v8-options'], { encoding: 'utf8' }).stdout;
    for (const flag of SERVER_V8_FLAGS.split(' ')) expect(known).toContain(`  --${flag.replace(/^--(no-)?/, '')} (`);
  });

  it('would be told apart from an unknown flag (the check above can fail)', () => {
    const r = spawnSync(process.execPath, ['-e', `require('node:v8').setFlagsFromString('--no-such-flag-here')`], { encoding: 'utf8' });
    expect(r.stdout + r.stderr).toMatch(/unrecognized flag/);
  });
});
