import { sql } from 'kysely';
import { openDatabase } from '../src/db/index.js';

/**
 * Prints the plans of the hot queries (the SQL the machinery builds for W1, W2 and W3, and the
 * bearer-token lookup): `node dist/bench/explain.js [sqlite-file]`, or with DATABASE_URL set.
 */
const JOB_COLUMNS = `jobs.id, jobs.title, jobs.reference, jobs.description, jobs.client_id, jobs.status_id, jobs.priority, jobs.order_number,
  jobs.address_line1, jobs.address_line2, jobs.address_city, jobs.address_region, jobs.address_postcode, jobs.address_country,
  jobs.due_date, jobs.created_by, jobs.account_id, jobs.created, jobs.modified, jobs.deleted`;
const databaseUrl = process.env.DATABASE_URL || undefined;
// The account condition of list rows queries: a range on PostgreSQL (src/collections/machinery/read.ts).
const account = (table: string, id: number) =>
  databaseUrl ? `${table}.account_id >= ${id} and ${table}.account_id <= ${id}` : `${table}.account_id = ${id}`;
const USER_COLUMNS = `users.id, users.first_name, users.last_name, users.company_name, users.email, users.phone, users.mobile, users.hourly_rate,
    users.active, users.colour, users.is_assignable, users.role_id, users.status_message, users.status_timestamp, users.account_id, users.deleted`;
const QUERIES: [string, string][] = [
  [
    'bearer token lookup',
    `select t.account_id, t.user_id, t.permissions, t.client_id, t.expires_at, r.kind from oauth_tokens as t
    inner join users as u on u.id = t.user_id inner join roles as r on r.id = u.role_id inner join oauth_clients as c on c.client_id = t.client_id
    where t.token_hash = 'x' and t.kind = 'access' and t.revoked = 0 and u.deleted = 0 and c.revoked = 0`,
  ],
  [
    'W1 rows',
    `select ${USER_COLUMNS} from users where ${account('users', 1)} order by users.account_id asc, users.id asc limit 50 offset 0`,
  ],
  [
    'W1 rows, second account',
    `select ${USER_COLUMNS} from users where ${account('users', 2)} order by users.account_id asc, users.id asc limit 50 offset 0`,
  ],
  ['W1 count (kept by triggers)', `select value, version from counters where account_id = 1 and name = 'rows:users'`],
  [
    'W2 rows',
    `select ${JOB_COLUMNS} from jobs where (${account('jobs', 1)} and lower(jobs.title) like '%pump%' escape '\\') order by jobs.account_id desc, jobs.id desc limit 50 offset 0`,
  ],
  [
    'W2 count, first time (then remembered while counters.version is unchanged)',
    `select count(*) as n, (select version from counters where account_id = 1 and name = 'rows:jobs') as v
    from jobs where (jobs.account_id = 1 and lower(jobs.title) like '%pump%' escape '\\')`,
  ],
  ['W3 item', `select ${JOB_COLUMNS} from jobs where (jobs.account_id = 1 and jobs.id in (1234))`],
  [
    'rate-limit hit',
    `insert into rate_limits (bucket, window_start, hits) values ('b', 0, 1) on conflict (bucket) do update set hits = rate_limits.hits + 1 returning hits`,
  ],
];

const database = openDatabase({ databaseUrl, sqliteFile: process.argv[2] });
for (const [name, text] of QUERIES) {
  // EXPLAIN ANALYZE runs the statement: writes are only planned.
  const analyze = text.startsWith('select') ? 'analyze, ' : '';
  const explain = databaseUrl ? `explain (${analyze}costs off, summary off) ${text}` : `explain query plan ${text}`;
  const { rows } = await sql.raw<Record<string, unknown>>(explain).execute(database.db);
  const lines = databaseUrl
    ? rows.map((r) => String(r['QUERY PLAN']))
    : rows.map((r) => `${'  '.repeat(depth(rows, r))}${r.detail}`);
  console.log(`-- ${name}\n${lines.join('\n')}\n`);
}
await database.close();

function depth(rows: Record<string, unknown>[], r: Record<string, unknown>): number {
  let d = 0;
  let parent = r.parent;
  while (parent) {
    d++;
    parent = rows.find((x) => x.id === parent)?.parent;
  }
  return d;
}
