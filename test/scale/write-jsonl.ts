// Writes a demo clinic as an import file: npx tsx test/scale/write-jsonl.ts --scale 600 --out /tmp/demo.jsonl
// (scale 600: 120,000 clientas, 600,000 citas, 300,000 llamadas = 1,020,000 lines). Deterministic.
import fs from 'node:fs';
import { once } from 'node:events';
import { generateDemo } from '../../src/demo/generate.js';
import { arg, NOW_MS, toJsonLine } from './common.js';

const scale = Number(arg('scale', '600'));
const out = fs.createWriteStream(arg('out', '/tmp/clinic-demo.jsonl'));
const zone = 'Europe/Madrid';
let n = 0;
for (const r of generateDemo({ seed: 1, scale, today: '2026-03-28', timeZone: zone, nowSeconds: NOW_MS / 1000 })) {
  if (!out.write(`${toJsonLine(r, zone)}\n`)) await once(out, 'drain');
  n++;
}
out.end();
await once(out, 'finish');
process.stderr.write(`${n} lines\n`);
