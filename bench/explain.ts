import { sql } from 'kysely';
import { openDatabase } from '../src/db/index.js';

/**
 * Prints the plans of the hot queries, as the server writes them: the token lookup and the
 * revocation epoch (every request), lists with their sort (W1, W2), items by id (W3, and the
 * members an expansion reads), the kept row count, an update by key (W5), events after an id (the
 * webhook fan-out, /events), a webhook's waiting deliveries and the worker's due ones; PRODUCT §10's
 * `near` and `where=client.name ~` (bench/places.ts).
 * `node dist/bench/explain.js [sqlite-file]`, or with DATABASE_URL set, on a seeded database
 * (bench/seed.ts): the ids used are read from it first.
 */
const databaseUrl = process.env.DATABASE_URL || undefined;
const database = openDatabase({ databaseUrl, sqliteFile: process.argv[2] });
const db = database.db;

const one = async (text: string) =>
  Number(Object.values((await sql.raw<Record<string, unknown>>(text).execute(db)).rows[0] ?? {})[0] ?? 0);
const [a1, a2] = [1, 2];
const job = await one(`select max(id) from jobs where account_id = ${a1}`);
const clients = (
  await sql.raw<{ id: number }>(`select id from clients where account_id = ${a1} limit 5`).execute(db)
).rows
  .map((r) => r.id)
  .join(', ');
const token = await one(`select id from oauth_tokens where account_id = ${a1} order by id desc limit 1`);
const hash = (
  await sql.raw<{ h: string }>(`select token_hash as h from oauth_tokens where id = ${token || 0}`).execute(db)
).rows[0]?.h;
const eventFrom = Math.max(0, (await one(`select max(id) from events where account_id = ${a1}`)) - 50);

// The account condition of list rows queries: a range on PostgreSQL (src/collections/machinery/read.ts).
const account = (table: string, id: number) =>
  databaseUrl ? `${table}.account_id >= ${id} and ${table}.account_id <= ${id}` : `${table}.account_id = ${id}`;
const USER_COLUMNS = `users.id, users.first_name, users.last_name, users.company_name, users.email, users.phone, users.mobile, users.hourly_rate,
    users.active, users.colour, users.is_assignable, users.role_id, users.status_message, users.status_timestamp, users.account_id, users.deleted`;
const JOB_COLUMNS = `jobs.id, jobs.title, jobs.reference, jobs.description, jobs.client_id, jobs.status_id, jobs.priority, jobs.order_number,
  jobs.address_line1, jobs.address_line2, jobs.address_city, jobs.address_region, jobs.address_postcode, jobs.address_country,
  jobs.due_date, jobs.created_by, jobs.account_id, jobs.created, jobs.modified, jobs.deleted, jobs.version`;
const KEPT_COUNT = (table: string, id: number) =>
  `(select coalesce(sum(value), 0) from row_counts where account_id = ${id} and tbl = '${table}') as kept`;
const EPOCH = (id: number) => `(select auth_epoch from accounts where id = ${id}) as auth_epoch`;

// PRODUCT §10 (bench/places.ts): the jobs within 10 km of a point, by the bounding box of the
// circle on the (account_id, address_lat) index and the exact haversine (src/collections/machinery/near.ts).
const NEAR = { lat: 53.8, lng: -1.55, km: 10 };
const toRad = (d: number) => (d * Math.PI) / 180;
const angle = NEAR.km / 6371.0088;
const dLat = (angle * 180) / Math.PI + 1e-6;
const dLng = (Math.asin(Math.sin(angle) / Math.cos(toRad(NEAR.lat))) * 180) / Math.PI + 1e-6;
const h = `(power(sin(radians(jobs.address_lat - ${NEAR.lat}) / 2), 2) + ${Math.cos(toRad(NEAR.lat))} * cos(radians(jobs.address_lat)) * power(sin(radians(jobs.address_lng - ${NEAR.lng}) / 2), 2))`;
const DISTANCE = `(${2 * 6371.0088} * asin(sqrt(case when ${h} > 1 then 1 else ${h} end)))`;
const NEAR_WHERE = `jobs.address_lat is not null and jobs.address_lng is not null
    and jobs.address_lat >= ${NEAR.lat - dLat} and jobs.address_lat <= ${NEAR.lat + dLat}
    and jobs.address_lng >= ${NEAR.lng - dLng} and jobs.address_lng <= ${NEAR.lng + dLng} and ${DISTANCE} <= ${NEAR.km}`;
// where=client.name ~ "jones": the client of each job, in the account (src/collections/machinery/filter.ts).
const CLIENT_NAME = `exists (select fsm_assoc.id from clients as fsm_assoc where fsm_assoc.account_id = ${a1}
    and fsm_assoc.id = jobs.client_id and lower(fsm_assoc.name) like '%jones%' escape '\\')`;

const QUERIES: [string, string][] = [
  [
    'Wnear rows (jobs within 10 km, nearest first)',
    `select ${JOB_COLUMNS}, floor(${DISTANCE} * 1000 + 0.5) / 1000 as fsm_distance from jobs
    where ${account('jobs', a1)} and ${NEAR_WHERE}
    order by jobs.account_id asc, fsm_distance, jobs.id asc limit 50 offset 0`,
  ],
  ['Wnear count', `select count(*) from jobs where jobs.account_id = ${a1} and ${NEAR_WHERE}`],
  [
    'Wassoc rows (jobs whose client ~ jones, newest first)',
    `select ${JOB_COLUMNS} from jobs where ${account('jobs', a1)} and ${CLIENT_NAME}
    order by jobs.account_id desc, jobs.id desc limit 50 offset 0`,
  ],
  ['Wassoc count', `select count(*) from jobs where jobs.account_id = ${a1} and ${CLIENT_NAME}`],
  [
    'bearer token lookup (the token names its account)',
    `select t.account_id, t.user_id, t.permissions, t.client_id, t.expires_at, r.kind, a.auth_epoch from oauth_tokens as t
    inner join users as u on u.account_id = t.account_id and u.id = t.user_id
    inner join roles as r on r.account_id = u.account_id and r.id = u.role_id
    inner join oauth_clients as c on c.client_id = t.client_id inner join accounts as a on a.id = t.account_id
    where t.token_hash = '${hash ?? 'x'}' and t.account_id = ${a1} and t.kind = 'access' and t.revoked = 0 and u.deleted = 0 and c.revoked = 0`,
  ],
  [
    'bearer token lookup (a token issued before: by its hash alone)',
    `select t.account_id, t.user_id, t.permissions, t.client_id, t.expires_at, r.kind, a.auth_epoch from oauth_tokens as t
    inner join users as u on u.account_id = t.account_id and u.id = t.user_id
    inner join roles as r on r.account_id = u.account_id and r.id = u.role_id
    inner join oauth_clients as c on c.client_id = t.client_id inner join accounts as a on a.id = t.account_id
    where t.token_hash = '${hash ?? 'x'}' and t.kind = 'access' and t.revoked = 0 and u.deleted = 0 and c.revoked = 0`,
  ],
  ['revocation epoch (every request)', `select auth_epoch from accounts where id = ${a1}`],
  [
    'W1 rows (users, first page, by id)',
    `select ${USER_COLUMNS}, ${KEPT_COUNT('users', a1)}, ${EPOCH(a1)} from users where ${account('users', a1)}
    order by users.account_id asc, users.id asc limit 50 offset 0`,
  ],
  [
    'W1 rows, second account',
    `select ${USER_COLUMNS} from users where ${account('users', a2)} order by users.account_id asc, users.id asc limit 50 offset 0`,
  ],
  [
    'list sorted by another column (users by last name)',
    `select ${USER_COLUMNS} from users where ${account('users', a1)}
    order by users.account_id asc, users.last_name asc, users.id asc limit 50 offset 0`,
  ],
  [
    'W2 rows (jobs ~ pump, newest first)',
    `select ${JOB_COLUMNS} from jobs where (${account('jobs', a1)} and lower(jobs.title) like '%pump%' escape '\\')
    order by jobs.account_id desc, jobs.id desc limit 50 offset 0`,
  ],
  [
    'W3 item by id',
    `select ${JOB_COLUMNS}, ${EPOCH(a1)} from jobs where jobs.account_id = ${a1} and jobs.id in (${job})`,
  ],
  [
    'association members of a page (clients by ids)',
    `select id, name from clients where id in (${clients || 0}) and account_id = ${a1}`,
  ],
  [
    'W5 update by key',
    `update jobs set title = 'x', version = version + 1 where id = ${job} and account_id = ${a1} returning *`,
  ],
  [
    'events after an id (fan-out, /events)',
    `select id, type from events where account_id = ${a1} and id > ${eventFrom} order by id limit 100`,
  ],
  [
    "a webhook's waiting deliveries",
    `select count(*) from (select 1 from deliveries d where d.account_id = ${a1} and d.webhook_id = 1
    and d.state = 'pending' and d.attempts = 0 limit 100) q`,
  ],
  [
    "the worker's due deliveries",
    `select deliveries.id, deliveries.account_id, deliveries.webhook_id from deliveries
    inner join webhooks on webhooks.account_id = deliveries.account_id and webhooks.id = deliveries.webhook_id
    where deliveries.state = 'pending' and deliveries.next_attempt_at <= 0
    and (deliveries.lease_until is null or deliveries.lease_until < 0) and webhooks.active = 1
    order by deliveries.next_attempt_at, deliveries.id limit 40`,
  ],
];

for (const [name, text] of QUERIES) {
  // EXPLAIN ANALYZE runs the statement: writes are only planned.
  const analyze = text.startsWith('select') ? 'analyze, ' : '';
  const explain = databaseUrl ? `explain (${analyze}costs off, summary off) ${text}` : `explain query plan ${text}`;
  const { rows } = await sql.raw<Record<string, unknown>>(explain).execute(db);
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
