import { createHash, createHmac } from 'node:crypto';
import { strongEtag } from '../src/services/conditional.js';
import { decodeCursor, encodeCursor } from '../src/services/feed.js';
import { ifNoneMatch } from '../src/http/conditional.js';
import { openDatabase } from '../src/db/connect.js';
import { migrateToLatest } from '../src/db/migrate.js';
import { dataVersions } from '../src/repos/clinics.js';

function time(label: string, n: number, fn: () => unknown) {
  for (let i = 0; i < n / 10; i++) fn();
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < n; i++) fn();
  console.log(label.padEnd(30), (Number(process.hrtime.bigint() - t0) / n / 1000).toFixed(2), 'µs');
}
async function atime(label: string, n: number, fn: () => Promise<unknown>) {
  for (let i = 0; i < n / 10; i++) await fn();
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < n; i++) await fn();
  console.log(label.padEnd(30), (Number(process.hrtime.bigint() - t0) / n / 1000).toFixed(2), 'µs');
}
const clinic = '6f2b3c1e-2d4a-4c8e-9f1a-3b5d7e9f1a2c';
const c = encodeCursor(12345, clinic);
time('decodeCursor', 200000, () => decodeCursor(c, clinic));
time('strongEtag', 200000, () => strongEtag(['eventos', clinic, 'Europe/Madrid', 12345, 500, null, 12345, 0]));
const tag = strongEtag(['x']);
time('ifNoneMatch', 200000, () => ifNoneMatch(tag, tag));
time('hmac', 200000, () => createHmac('sha256', 'pepper-xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx').update('svc_abcdefghijklmnopqrstuvwxyz0123456789abcdefg').digest('hex'));
time('sha256 createHash', 200000, () => createHash('sha256').update('svc_abcdefghijklmnopqrstuvwxyz0123456789abcdefg').digest('base64url'));
time('randomUUID', 200000, () => crypto.randomUUID());
const d = await openDatabase({ kind: 'sqlite', file: '/tmp/cf/data/clinic.db' });
const rows = await d.db.selectFrom('clinics').select('id').execute();
await atime('dataVersions (kysely)', 50000, () => dataVersions(d.db, rows[0]!.id));
await atime('promise resolve', 200000, async () => 1);

import BetterSqlite3 from 'better-sqlite3';
const raw = new BetterSqlite3('/tmp/cf/data/clinic.db');
const st = raw.prepare('select "clientas", "data", "events_seq", "events_expired" from "clinic_data_versions" where "clinic_id" = ?');
time('raw stmt.all', 200000, () => st.all(rows[0]!.id));
st.raw(true);
time('raw stmt.all raw', 200000, () => st.all(rows[0]!.id));
const st2 = raw.prepare('select 1');
time('raw select 1', 200000, () => st2.get());
