// The SDK's auto-paging as an integrator runs it, in a process of its own (so that its heap is
// the SDK's alone): `for await` over every cita of the clinic, counting the requests the SDK makes
// and, every SAMPLE_EVERY records, the heap still in use after a full garbage collection. With
// MODE=collect it keeps every record in an array instead (the reference: what a growing heap
// looks like to this sampler). Started by bench/lib/sdk-paging.ts with node --expose-gc; prints
// one JSON object on stdout.
import { ClinicApi } from '@clinic-api/sdk';
import { need } from './lib/child-env.js';

const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) {
  process.stderr.write('sdk-paging-client: run with node --expose-gc\n');
  process.exit(2);
}
const every = Number(process.env.SAMPLE_EVERY ?? 5_000);
const collect = process.env.MODE === 'collect';

let requests = 0;
let maxPerRequest = 0;
/** attempts the SDK made again (a 503 of a busy server, say): requests beyond the pages */
const retries: string[] = [];
const api = new ClinicApi({
  onRetry: ({ error }) => retries.push(`${error.status ?? ''} ${error.code}`.trim()),
  baseUrl: need('sdk-paging-client', 'BASE'),
  apiKey: need('sdk-paging-client', 'KEY'),
  fetch: (input, init) => {
    requests++;
    maxPerRequest = Math.max(maxPerRequest, Number(new URL(String(input)).searchParams.get('limit')));
    return fetch(input, init);
  },
});

const MiB = 2 ** 20;
const retained = () => {
  gc();
  return process.memoryUsage().heapUsed / MiB;
};
const samples: { records: number; heapMiB: number }[] = [{ records: 0, heapMiB: retained() }];
const kept: unknown[] = [];
let records = 0;
const started = performance.now();
// Every cita of the clinic, whatever its date: the way a mirror reads a collection.
for await (const cita of api.citas.all({ updated_since: '1970-01-01T00:00:00Z' })) {
  records++;
  if (collect) kept.push(cita);
  if (records % every === 0) samples.push({ records, heapMiB: retained() });
}
const ms = performance.now() - started;
if (records % every !== 0) samples.push({ records, heapMiB: retained() });
const total = (await api.citas.list({ updated_since: '1970-01-01T00:00:00Z', limit: 1 })).total;
process.stdout.write(
  JSON.stringify({
    mode: collect ? 'collect' : 'stream',
    records,
    total,
    // the last request was the check of `total` above
    requests: requests - 1,
    retries,
    maxPerRequest,
    ms,
    samples,
    maxRssMiB: process.resourceUsage().maxRSS / 1024,
    kept: kept.length,
  }) + '\n',
);
