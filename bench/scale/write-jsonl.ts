// Writes a demo clinic as an import file: npx tsx bench/scale/write-jsonl.ts --scale 600 --out /tmp/demo.jsonl
// (scale 600: 120,000 clientas, 600,000 citas, 300,000 llamadas = 1,020,000 lines). Deterministic.
import fs from 'node:fs';
import { once } from 'node:events';
import { generateDemo } from '../../src/demo/generate.js';
import { commandLine } from '../../tools/args.js';
import { NOW_MS, toJsonLine } from './common.js';

const cli = commandLine({
  name: 'scale/write-jsonl',
  usage: `Usage: npx tsx bench/scale/write-jsonl.ts [--scale N] [--out FILE]

  --scale  200 clientas, 1000 citas, 500 llamadas per unit (default 600)
  --out    the file to write (default /tmp/clinic-demo.jsonl)
`,
  options: { scale: { type: 'string', default: '600' }, out: { type: 'string', default: '/tmp/clinic-demo.jsonl' } },
});
const scale = cli.number('scale', cli.values.scale, 0.01, 100_000);
const out = fs.createWriteStream(cli.values.out);
const zone = 'Europe/Madrid';
let n = 0;
for (const r of generateDemo({ seed: 1, scale, today: '2026-03-28', timeZone: zone, nowSeconds: NOW_MS / 1000 })) {
  if (!out.write(`${toJsonLine(r, zone)}\n`)) await once(out, 'drain');
  n++;
}
out.end();
await once(out, 'finish');
process.stderr.write(`${n} lines\n`);
