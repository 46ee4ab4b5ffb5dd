import Fastify from 'fastify';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { openRuntime } from '../src/runtime.js';
import { MemoryGcraLimiter } from '../src/services/rate-limit.js';
import fs from 'node:fs';

const N = 15000;
async function time(fn: () => Promise<unknown>) {
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < N; i++) await fn();
  return Number(process.hrtime.bigint() - t0) / 1000 / N;
}
const [cl, key] = fs.readFileSync('/tmp/cf/key.txt', 'utf8').trim().split(' ');
const [url, etag] = fs.readFileSync('/tmp/cf/url.txt', 'utf8').trim().split(' ');
const path = url!.replace('http://127.0.0.1:3555', '');
const bare = Fastify({ logger: false });
bare.get('/bare/304', async (_req, reply) => reply.code(304).header('etag', '"bare"').send());
const logged = Fastify({ logger: { level: 'warn' } });
logged.get('/bare/304', async (_req, reply) => reply.code(304).header('etag', '"bare"').send());
const config = loadConfig({ DATA_DIR: '/tmp/cf/data', LOG_LEVEL: 'warn', RATE_LIMIT_RPS: '100000', RATE_LIMIT_BURST: '1000000' });
const rt = await openRuntime(config);
const app = await buildApp({ config, database: rt.database, keys: rt.keys, limiter: new MemoryGcraLimiter(100000, 1000000), authFailLimiter: new MemoryGcraLimiter(10, 20), logger: { level: 'warn' } });
await Promise.all([bare.ready(), logged.ready(), app.ready()]);
const h = { authorization: `Bearer ${key}`, 'if-none-match': etag! };
console.log((await app.inject({ url: path, headers: h })).statusCode);
const cases: [string, () => Promise<unknown>][] = [
  ['bare', () => bare.inject({ url: '/bare/304', headers: { 'if-none-match': '"bare"' } })],
  ['bare+logger', () => logged.inject({ url: '/bare/304', headers: { 'if-none-match': '"bare"' } })],
  ['app 404', () => app.inject({ url: '/nope' })],
  ['app eventos 401', () => app.inject({ url: path })],
  ['app eventos 304', () => app.inject({ url: path, headers: h })],
];
const sums = new Map<string, number[]>();
for (let round = 0; round < 4; round++) {
  for (const [name, fn] of cases) {
    const us = await time(fn);
    if (round > 0) sums.set(name, [...(sums.get(name) ?? []), us]);
  }
}
for (const [name, v] of sums) console.log(name.padEnd(20), v.map((x) => x.toFixed(1)).join(' '), ' min', Math.min(...v).toFixed(1));
await app.close(); await rt.close();
