import { sql } from 'kysely';
import { openDatabase } from '../src/db/index.js';

/**
 * Issue 51: the statements of `~` and of an association member in both forms, walking and
 * indexed (src/collections/machinery/read.ts), timed on a seeded SQLite file (bench/seed.ts), a
 * common word, a rarer one and one no row holds: median ms of 20 runs after 3.
 * `node dist/bench/contains-plans.js .bench/sqlite-main-<key>.sqlite` (a copy: it only reads).
 */
const database = openDatabase({ sqliteFile: process.argv[2] });
const db = database.db;
const lowered = (x: string) =>
  `(case when octet_length(${x}) = length(${x}) then lower(${x}) else fsm_lower(${x}) end)`;
const fts = (t: string, w: string) => `(select rowid from ${t} where ${t} match '"${w}"')`;
const median = async (q: string) => {
  const ts: number[] = [];
  for (let i = 0; i < 23; i++) {
    const t = process.hrtime.bigint();
    await sql.raw(q).execute(db);
    if (i >= 3) ts.push(Number(process.hrtime.bigint() - t) / 1e6);
  }
  return ts.sort((a, b) => a - b)[10].toFixed(2);
};
const page = (c: string) =>
  `select jobs.id from jobs where jobs.account_id = 1 and ${c} order by jobs.account_id desc, jobs.id desc limit 50`;
const count = (c: string) => `select count(*) from jobs where jobs.account_id = 1 and ${c}`;
const out: string[][] = [];
for (const w of ['pump', 'descale', 'pmup']) {
  const like = `${lowered('jobs.title')} like '%${w}%' escape '\\'`;
  const indexed = `jobs.id in ${fts('jobs_title_contains', w)} and ${like}`;
  out.push([
    `title ~ "${w}"`,
    await median(page(like)),
    await median(page(indexed)),
    await median(count(like)),
    await median(count(indexed)),
  ]);
}
for (const w of ['jones', 'patel', 'pmup']) {
  const like = `${lowered('a.name')} like '%${w}%' escape '\\'`;
  const each = `exists (select a.id from clients as a where a.account_id = 1 and a.id = jobs.client_id and ${like})`;
  const once = `jobs.client_id in (select a.id from clients as a where a.account_id = 1 and a.id in ${fts('clients_name_contains', w)} and ${like})`;
  out.push([
    `client.name ~ "${w}"`,
    await median(page(each)),
    await median(page(once)),
    await median(count(each)),
    await median(count(once)),
  ]);
}
console.log('| term | page, walking (ms) | page, indexed (ms) | count, scan (ms) | count, indexed (ms) |');
console.log('|---|---|---|---|---|');
for (const r of out) console.log(`| ${r.join(' | ')} |`);
await database.close();
