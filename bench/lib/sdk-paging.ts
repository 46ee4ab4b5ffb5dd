// The SDK's auto-paging over the big clinic's citas (100,000 at scale 100): requests per 500
// records and the heap over the walk (bench/sdk-paging-client.ts, a process of its own), once
// streaming (the SDK's `for await`, nothing kept) and once keeping every record (the reference a
// growing heap looks like). Its own section of docs/benchmarks.md per database, with verdicts
// against the issue's goal: at most 1 request per 500 records, and constant memory.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import type { Dataset } from './dataset.js';
import { ROOT } from './options.js';
import type { ChildServer } from './processes.js';
import { machineTable, table, type Db, type Machine } from './report.js';

export const sdkPagingStart = (db: Db) => `<!-- bench:sdk-paging:${db}:start -->`;
export const sdkPagingEnd = (db: Db) => `<!-- bench:sdk-paging:${db}:end -->`;

/** Constant memory: the retained heap moves by less than this over the whole walk (a kept page of 500 citas is ~0.5 MiB). */
const FLAT_MIB = 2;

export interface PagingRun {
  mode: 'stream' | 'collect';
  records: number;
  total: number;
  /** every request the SDK made, retries included */
  requests: number;
  /** why each retry was made (`503 service_unavailable`, `connection_error`) */
  retries: string[];
  maxPerRequest: number;
  ms: number;
  samples: { records: number; heapMiB: number }[];
  maxRssMiB: number;
}

export interface SdkPagingReport {
  scale: number;
  clinicCitas: number;
  stream: PagingRun;
  collect: PagingRun;
}

const SDK_DIST = path.join(ROOT, 'packages/sdk/dist/index.js');

function runClient(server: ChildServer, apiKey: string, mode: 'stream' | 'collect', log: (l: string) => void): Promise<PagingRun> {
  log(
    "sdk paging: every cita through the SDK's for-await " +
      `(${mode === 'stream' ? 'nothing kept' : 'each kept in an array, the reference'}) ...`,
  );
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--expose-gc', '--import', 'tsx', path.join(ROOT, 'bench/sdk-paging-client.ts')], {
      cwd: ROOT,
      env: { ...process.env, BASE: server.baseUrl, KEY: apiKey, MODE: mode },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (err += c.toString()));
    child.on('exit', (code) => {
      if (code !== 0) return reject(new Error(`bench/sdk-paging-client.ts exited ${code}: ${err.slice(-2000)}`));
      const run = JSON.parse(out) as PagingRun;
      log(
        `  ${run.records.toLocaleString('en-US')} records in ${pages(run)} requests${retried(run)}, ${(run.ms / 1000).toFixed(1)} s; ` +
          `retained heap ${heapRange(run)}`,
      );
      resolve(run);
    });
  });
}

export async function runSdkPaging(server: ChildServer, ds: Dataset, log: (l: string) => void): Promise<SdkPagingReport> {
  if (!fs.existsSync(SDK_DIST))
    throw new Error('packages/sdk/dist is missing: run `npm run build -w @clinic-api/sdk` (npm install builds it)');
  const stream = await runClient(server, ds.apiKey, 'stream', log);
  const collect = await runClient(server, ds.apiKey, 'collect', log);
  return { scale: ds.big.scale, clinicCitas: ds.big.citas, stream, collect };
}

/** Requests for pages: every request but the retries. */
const pages = (r: PagingRun) => r.requests - r.retries.length;
const retried = (r: PagingRun) => (r.retries.length ? ` (and ${r.retries.length} retried: ${[...new Set(r.retries)].join(', ')})` : '');

/** The retained heap after the first page is in (the SDK's code and one page), through to the end. */
const afterFirstPage = (r: PagingRun) => r.samples.filter((s) => s.records > 0);
const heapRange = (r: PagingRun) => {
  const hs = afterFirstPage(r).map((s) => s.heapMiB);
  return `${Math.min(...hs).toFixed(1)}–${Math.max(...hs).toFixed(1)} MiB`;
};
const growth = (r: PagingRun) => {
  const hs = afterFirstPage(r).map((s) => s.heapMiB);
  return Math.max(...hs) - Math.min(...hs);
};

export function sdkPagingVerdicts(r: SdkPagingReport): string[] {
  const s = r.stream;
  const pagesNeeded = Math.ceil(s.total / 500);
  const complete = s.records === s.total;
  return [
    `${complete ? 'met' : '**not met**'}: every record read once: ${s.records.toLocaleString('en-US')} of the clinic's ` +
      `${s.total.toLocaleString('en-US')} citas`,
    `${pages(s) <= pagesNeeded ? 'met' : '**not met**'}: at most 1 request per 500 records: ${pages(s)} requests for ` +
      `${s.records.toLocaleString('en-US')} records (${(s.records / Math.max(1, pages(s))).toFixed(0)} a request, ` +
      `limit=${s.maxPerRequest}; ⌈${s.total}/500⌉ = ${pagesNeeded})${retried(s)}`,
    `${growth(s) < FLAT_MIB ? 'met' : '**not met**'}: constant memory: the retained heap stays within ${growth(s).toFixed(2)} MiB ` +
      `(${heapRange(s)}) from the first 5,000 records to the last (goal: under ${FLAT_MIB} MiB); keeping every record instead grows it ` +
      `by ${growth(r.collect).toFixed(0)} MiB (${heapRange(r.collect)})`,
  ];
}

export function sdkPagingTables(r: SdkPagingReport): string {
  const row = (x: PagingRun) => [
    x.mode === 'stream' ? '`for await`, nothing kept' : 'each record kept (reference)',
    x.records.toLocaleString('en-US'),
    `${pages(x)}${x.retries.length ? ` (+${x.retries.length} retried)` : ''}`,
    (x.records / Math.max(1, pages(x))).toFixed(0),
    (x.ms / 1000).toFixed(1),
    Math.round(x.records / (x.ms / 1000)).toLocaleString('en-US'),
    heapRange(x),
    x.maxRssMiB.toFixed(0),
  ];
  const runs = table(
    ['walk', 'records', 'requests', 'records/request', 's', 'records/s', 'retained heap', 'client peak RSS MiB'],
    [row(r.stream), row(r.collect)],
    ['l', 'r', 'r', 'r', 'r', 'r', 'r', 'r'],
  );
  // The heap over the walk: a handful of the samples, first to last.
  const pick = (x: PagingRun) => {
    const s = x.samples;
    const idx = [...new Set([0, 1, Math.floor(s.length / 4), Math.floor(s.length / 2), Math.floor((3 * s.length) / 4), s.length - 1])];
    return idx.filter((i) => i < s.length).map((i) => s[i]!);
  };
  const streamPts = pick(r.stream);
  const collectPts = pick(r.collect);
  const series = table(
    ['records read', ...streamPts.map((p) => p.records.toLocaleString('en-US'))],
    [
      ['retained heap MiB, nothing kept', ...streamPts.map((p) => p.heapMiB.toFixed(1))],
      ['retained heap MiB, each kept', ...collectPts.map((p) => p.heapMiB.toFixed(1))],
    ],
    ['l', ...streamPts.map(() => 'r' as const)],
  );
  return `${runs}\n\n${series}`;
}

export function sdkPagingSection(m: Machine, db: Db, reports: SdkPagingReport[]): string {
  return [
    sdkPagingStart(db),
    '',
    `## The SDK's auto-paging: ${db === 'sqlite' ? 'SQLite' : 'PostgreSQL'}`,
    '',
    `Written by \`npm run bench -- --db ${db}\` (or \`--cases sdk-paging\`); the rest of this file is not touched. ` +
      '`bench/sdk-paging-client.ts` reads every cita of the big clinic with ' +
      '`for await (const cita of api.citas.all({ updated_since }))`, in a process of its own, counting its requests and, every 5,000 ' +
      'records, the heap still in use after a full garbage collection (`--expose-gc`); the second walk keeps each record, to show what ' +
      'a growing heap looks like to the same sampler.',
    '',
    machineTable(m),
    '',
    ...reports.flatMap((r) => [
      `### ${r.clinicCitas.toLocaleString('en-US')} citas (scale ${r.scale})`,
      '',
      sdkPagingTables(r),
      '',
      ...sdkPagingVerdicts(r).map((v) => `- ${v}`),
      '',
    ]),
    sdkPagingEnd(db),
  ].join('\n');
}
