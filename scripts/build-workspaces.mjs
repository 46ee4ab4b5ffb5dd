// The root's "prepare" (so `npm install`) builds every workspace package: `npm run build` in each
// that has one. With CI=true, as a CI system would set it: tools with a terminal spinner (n8n's
// node CLI) then print their plain progress lines, not animation frames, into npm's output.
import { spawnSync } from 'node:child_process';

const result = spawnSync('npm', ['run', 'build', '--workspaces', '--if-present'], {
  stdio: 'inherit',
  env: { ...process.env, CI: 'true' },
  shell: process.platform === 'win32',
});
process.exit(result.status ?? 1);
