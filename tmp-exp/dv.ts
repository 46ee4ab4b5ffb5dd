import BetterSqlite3 from 'better-sqlite3';
function time(label: string, n: number, fn: () => unknown) {
  for (let i = 0; i < n / 10; i++) fn();
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < n; i++) fn();
  console.log(label.padEnd(30), (Number(process.hrtime.bigint() - t0) / n / 1000).toFixed(2), 'µs');
}
const raw = new BetterSqlite3('/tmp/cf/data/clinic.db');
raw.pragma('journal_mode = WAL');
const id = (raw.prepare('select id from clinics').get() as { id: string }).id;
const st = raw.prepare('select "clientas", "data", "events_seq", "events_expired" from "clinic_data_versions" where "clinic_id" = ?');
const dv = raw.prepare('pragma data_version');
for (let k = 0; k < 3; k++) {
  time('pk read', 100000, () => st.all(id));
  time('data_version', 100000, () => dv.get());
  time('select 1', 100000, () => raw.prepare('select 1').get());
}
