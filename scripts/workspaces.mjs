// `node scripts/workspaces.mjs <script>`: `npm run <script>` in every workspace package that has
// it, with CI=true as a CI system would set it: tools with a terminal spinner (n8n's node CLI)
// then print plain progress lines, not animation frames. The root's `prepare` (so `npm install`),
// `build` and `npm test` build the packages through it.
import { spawnSync } from 'node:child_process';

const script = process.argv[2];
if (!script) {
  process.stderr.write('usage: node scripts/workspaces.mjs <npm script>\n');
  process.exit(2);
}
const result = spawnSync('npm', ['run', script, '--workspaces', '--if-present'], {
  stdio: 'inherit',
  env: { ...process.env, CI: 'true' },
  shell: process.platform === 'win32',
});
process.exit(result.status ?? 1);
