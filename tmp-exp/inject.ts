import Fastify from 'fastify';
import { Readable } from 'node:stream';
import { buildTestApp } from '../test/helpers/app.js';
import { dataVersions } from '../src/repos/clinics.js';

const N = 20000;
async function time(label: string, fn: () => Promise<unknown>) {
  for (let i = 0; i < 2000; i++) await fn();
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < N; i++) await fn();
  const us = Number(process.hrtime.bigint() - t0) / 1000 / N;
  console.log(label.padEnd(40), us.toFixed(1), 'µs/req');
}
const bare = Fastify();
bare.get('/bare/304', async (_req, reply) => reply.code(304).header('etag', '"bare"').send());
await bare.ready();
await time('bare 304 (inject)', () => bare.inject({ url: '/bare/304', headers: { 'if-none-match': '"bare"' } }));

const t = await buildTestApp('sqlite', { env: { RATE_LIMIT_RPS: '100000', RATE_LIMIT_BURST: '1000000' } });
const now = (await t.app.inject({ url: '/api/v1/eventos?cursor=now', headers: { authorization: `Bearer ${t.keyA}` } })).json().next_cursor;
const url = `/api/v1/eventos?cursor=${now}&limit=500`;
const etag = (await t.app.inject({ url, headers: { authorization: `Bearer ${t.keyA}` } })).headers.etag as string;
const h = { authorization: `Bearer ${t.keyA}`, 'if-none-match': etag };
console.log((await t.app.inject({ url, headers: h })).statusCode);
await time('eventos 304 (inject)', () => t.app.inject({ url, headers: h }));
await time('eventos 401 (no key)', () => t.app.inject({ url }));
await time('404 unknown path', () => t.app.inject({ url: '/nope' }));
await time('dataVersions only', () => dataVersions(t.database.db, t.clinicA.id));
await t.close();
