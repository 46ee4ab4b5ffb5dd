// Summarises a V8 .cpuprofile (from `npm run bench -- --cpu-prof DIR`, or any `node --cpu-prof`):
// where the busy time went, by function (self time), by package, and the service's own
// functions with their callees (total time).
//
//   node --import tsx bench/profile-summary.ts FILE.cpuprofile [--top 25]
import fs from 'node:fs';
import path from 'node:path';
import { commandLine } from '../tools/args.js';

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
  columnNumber: number;
}

interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}

interface Profile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

const cli = commandLine({
  name: 'profile-summary',
  usage: 'Usage: node --import tsx bench/profile-summary.ts FILE.cpuprofile [--top N]\n',
  options: { top: { type: 'string', default: '25' } },
  positionals: 1,
});
const top = cli.number('top', cli.values.top, 1, 10_000);
const profile = JSON.parse(fs.readFileSync(cli.positionals[0]!, 'utf8')) as Profile;

// Self time per node: each sample's time delta goes to the node it hit.
const self = new Map<number, number>();
for (let i = 0; i < profile.samples.length; i++) {
  const id = profile.samples[i]!;
  self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0));
}
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const parent = new Map<number, number>();
for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);

const IDLE = new Set(['(idle)', '(root)']);
const wallMs = (profile.endTime - profile.startTime) / 1000;
let busyUs = 0;
for (const [id, us] of self) if (!IDLE.has(byId.get(id)!.callFrame.functionName)) busyUs += us;

/** Where a frame's code lives: the service, a package, Node itself, or V8 / native. */
function owner(f: CallFrame): string {
  const url = f.url;
  if (!url) return f.functionName.startsWith('(') ? f.functionName : '(native)';
  if (url.startsWith('node:')) return 'node:' + url.slice(5).split('/')[0];
  const nm = url.lastIndexOf('/node_modules/');
  if (nm >= 0) {
    const rest = url.slice(nm + '/node_modules/'.length).split('/');
    return rest[0]!.startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0]!;
  }
  const m = /\/(?:dist|src)\/(.+)$/.exec(url);
  if (m) return `service:${m[1]!.replace(/\.(js|ts)$/, '')}`;
  return path.basename(url);
}

function where(f: CallFrame): string {
  if (!f.url) return '';
  const nm = f.url.lastIndexOf('/node_modules/');
  const short = nm >= 0 ? f.url.slice(nm + '/node_modules/'.length) : f.url.replace(/^file:\/\/.*?\/(dist|src)\//, '$1/');
  return `${short}:${f.lineNumber + 1}`;
}

const key = (f: CallFrame) => `${f.functionName || '(anonymous)'}\u0000${f.url}\u0000${f.lineNumber}`;

// Self time by function.
const fnSelf = new Map<string, { frame: CallFrame; us: number }>();
for (const [id, us] of self) {
  const f = byId.get(id)!.callFrame;
  if (IDLE.has(f.functionName)) continue;
  const k = key(f);
  const e = fnSelf.get(k) ?? { frame: f, us: 0 };
  e.us += us;
  fnSelf.set(k, e);
}

// Self time by owner (package).
const ownerSelf = new Map<string, number>();
for (const e of fnSelf.values()) ownerSelf.set(owner(e.frame), (ownerSelf.get(owner(e.frame)) ?? 0) + e.us);

// Total (inclusive) time by function, counting each sample once per function even under recursion.
const fnTotal = new Map<string, { frame: CallFrame; us: number }>();
for (const [id, us] of self) {
  if (IDLE.has(byId.get(id)!.callFrame.functionName)) continue;
  const seen = new Set<string>();
  for (let n: number | undefined = id; n !== undefined; n = parent.get(n)) {
    const f = byId.get(n)!.callFrame;
    const k = key(f);
    if (seen.has(k)) continue;
    seen.add(k);
    const e = fnTotal.get(k) ?? { frame: f, us: 0 };
    e.us += us;
    fnTotal.set(k, e);
  }
}

const pct = (us: number) => `${((100 * us) / busyUs).toFixed(1).padStart(5)}%`;
const ms = (us: number) => `${(us / 1000).toFixed(0).padStart(7)} ms`;
const out: string[] = [];
out.push(
  `${cli.positionals[0]}: ${wallMs.toFixed(0)} ms profiled, ${(busyUs / 1000).toFixed(0)} ms busy ` +
    `(${((100 * busyUs) / 1000 / wallMs).toFixed(0)}% of one core); percentages are of busy time`,
);
out.push('', `Self time by function (top ${top}):`);
for (const e of [...fnSelf.values()].sort((a, b) => b.us - a.us).slice(0, top)) {
  out.push(
    `${pct(e.us)} ${ms(e.us)}  ${(e.frame.functionName || '(anonymous)').padEnd(36)} ${owner(e.frame).padEnd(24)} ${where(e.frame)}`,
  );
}
out.push('', 'Self time by package:');
for (const [o, us] of [...ownerSelf.entries()].sort((a, b) => b[1] - a[1]).slice(0, top)) out.push(`${pct(us)} ${ms(us)}  ${o}`);
out.push('', `Total time (self + callees) of the service's own functions (top ${top}):`);
for (const e of [...fnTotal.values()]
  .filter((x) => owner(x.frame).startsWith('service:'))
  .sort((a, b) => b.us - a.us)
  .slice(0, top)) {
  out.push(`${pct(e.us)} ${ms(e.us)}  ${(e.frame.functionName || '(anonymous)').padEnd(36)} ${where(e.frame)}`);
}
out.push('', `Total time of package functions (top ${top}):`);
for (const e of [...fnTotal.values()]
  .filter((x) => !owner(x.frame).startsWith('service:') && !owner(x.frame).startsWith('(') && !owner(x.frame).startsWith('node:'))
  .sort((a, b) => b.us - a.us)
  .slice(0, top)) {
  out.push(
    `${pct(e.us)} ${ms(e.us)}  ${(e.frame.functionName || '(anonymous)').padEnd(36)} ${owner(e.frame).padEnd(24)} ${where(e.frame)}`,
  );
}
process.stdout.write(out.join('\n') + '\n');
