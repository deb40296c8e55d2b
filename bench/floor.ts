import crypto from 'node:crypto';
import SQLite from 'better-sqlite3';
import pg from 'pg';

/**
 * The floor ceiling's data access: the SQL our server runs for W1 and W3 (bearer-token lookup,
 * rows, the kept count), as prepared statements on the same driver, and nothing else.
 */
export interface FloorDb {
  token(
    hash: string,
    accountId: number,
  ): Promise<{ account_id: number; permissions: string; expires_at: number; kind: string } | undefined>;
  users(accountId: number, limit: number, offset: number): Promise<Record<string, any>[]>;
  usersCount(accountId: number): Promise<number>;
  /** Counts the request in the token's rate-limit window (the upsert our server runs). */
  hit(bucket: string, windowStart: number): Promise<number>;
  job(accountId: number, id: number): Promise<Record<string, any> | undefined>;
  /** W1's page and its kept count in one statement (the count as a column of each row), as our server reads it. */
  usersPage(accountId: number, limit: number, offset: number): Promise<Record<string, any>[]>;
  /** W4's least: the users inserted in one transaction (one statement), their rows back. */
  insertUsers(rows: Record<string, unknown>[]): Promise<Record<string, any>[]>;
  close(): Promise<void>;
}

/** The columns W4's users set, in the order of the insert below. */
export const USER_COLUMNS = [
  'account_id',
  'first_name',
  'last_name',
  'email',
  'mobile',
  'hourly_rate',
  'is_assignable',
  'role_id',
  'active',
  'deleted',
  'created',
  'modified',
];
/** A W4 item (bench/seed.ts userItem) as the row the ceilings insert: no validation, defaults, events or counts. */
export const userRow = (it: Record<string, any>, accountId: number, roleId: number | undefined, now: number) => ({
  account_id: accountId,
  first_name: it.firstName,
  last_name: it.lastName,
  email: it.email ?? null,
  mobile: it.mobile,
  hourly_rate: it.hourlyRate ?? 0,
  is_assignable: it.isAssignable ? 1 : 0,
  role_id: roleId,
  active: 1,
  deleted: 0,
  created: now,
  modified: now,
});

const insertUsers = (n: number, p: (i: number) => string) =>
  `insert into users (${USER_COLUMNS.join(', ')}) values ${Array.from({ length: n }, (_, r) => `(${USER_COLUMNS.map((_, c) => p(r * USER_COLUMNS.length + c + 1)).join(', ')})`).join(', ')} returning *`;

const TOKEN = `select t.account_id, t.user_id, t.permissions, t.client_id, t.expires_at, r.kind from oauth_tokens as t
  inner join users as u on u.account_id = t.account_id and u.id = t.user_id
  inner join roles as r on r.account_id = u.account_id and r.id = u.role_id
  inner join oauth_clients as c on c.client_id = t.client_id
  where t.token_hash = $1 and t.account_id = $2 and t.kind = 'access' and t.revoked = 0 and u.deleted = 0 and c.revoked = 0`;
const USERS = `select id, first_name, last_name, company_name, email, phone, mobile, hourly_rate, active, colour, is_assignable,
  role_id, status_message, status_timestamp, account_id, deleted from users where account_id = $1 order by account_id asc, id asc limit $2 offset $3`;
const COUNT = `select value from counters where account_id = $1 and name = 'rows:users'`;
/** The page with the kept row count (the sum of the table's count slots, migration 012) as a column. */
const PAGE = USERS.replace(
  ' from users where',
  ` , (select sum(value) from row_counts where account_id = $1 and tbl = 'users') as kept_count from users where`,
);
const HIT = `insert into rate_limits (bucket, window_start, hits) values ($1, $2, 1)
  on conflict (bucket) do update set
    hits = case when excluded.window_start > rate_limits.window_start then 1 else rate_limits.hits + 1 end,
    window_start = case when excluded.window_start > rate_limits.window_start then excluded.window_start else rate_limits.window_start end
  returning hits`;
const JOB = `select id, title, reference, description, client_id, site_id, status_id, priority, order_number, address_line1, address_line2,
  address_city, address_region, address_postcode, address_country, address_lat, address_lng, due_date, created_by, account_id, created, modified, deleted
  from jobs where account_id = $1 and id in ($2)`;

export function sqliteFloor(file: string): FloorDb {
  const db = new SQLite(file);
  db.pragma('journal_mode = WAL');
  db.pragma('busy_timeout = 5000');
  // As our server opens it (src/db/index.ts): the rate-limit upsert commits on every request.
  db.pragma('synchronous = NORMAL');
  const prep = (text: string) => db.prepare(text.replace(/\$\d/g, '?'));
  const token = prep(TOKEN);
  const users = prep(USERS);
  const count = prep(COUNT);
  const job = prep(JOB);
  const hit = prep(HIT);
  const page = prep(PAGE);
  return {
    token: async (hash, accountId) => token.get(hash, accountId) as never,
    users: async (a, l, o) => users.all(a, l, o) as never,
    usersCount: async (a) => Number((count.get(a) as { value: number } | undefined)?.value ?? 0),
    job: async (a, id) => job.get(a, id) as never,
    usersPage: async (a, l, o) => page.all(a, a, l, o) as never,
    close: async () => {
      db.close();
    },
    insertUsers: async (rows) => {
      const values = rows.flatMap((r) => USER_COLUMNS.map((c) => r[c]));
      const stmt = db.prepare(insertUsers(rows.length, () => '?'));
      return db.transaction(() => stmt.all(values))() as never;
    },
    // `all`, not `get`: SQLite runs its WAL auto-checkpoint only when a write steps to the end; with
    // `get` the WAL grew without bound (a server must checkpoint, so the floor pays for it too).
    hit: async (b, w) => Number((hit.all(b, w)[0] as { hits: number }).hits),
  };
}

export function postgresFloor(url: string): FloorDb {
  pg.types.setTypeParser(20, (v) => Number(v));
  pg.types.setTypeParser(1700, (v) => Number(v));
  const pool = new pg.Pool({ connectionString: url, max: 10 });
  // The account as a range, as our server sends it to PostgreSQL (src/collections/machinery/read.ts).
  const users = USERS.replace('where account_id = $1', 'where account_id >= $1 and account_id <= $1');
  const q = async (name: string, text: string, values: unknown[]) => (await pool.query({ name, text, values })).rows;
  return {
    token: async (hash, accountId) => (await q('token', TOKEN, [hash, accountId]))[0],
    users: (a, l, o) => q('users', users, [a, l, o]),
    usersCount: async (a) => Number((await q('count', COUNT, [a]))[0]?.value ?? 0),
    job: async (a, id) => (await q('job', JOB, [a, id]))[0],
    hit: async (b, w) => Number((await q('hit', HIT, [b, w]))[0].hits),
    close: () => pool.end(),
    insertUsers: async (rows) => {
      const client = await pool.connect();
      try {
        await client.query('begin');
        const { rows: made } = await client.query({
          name: `insert${rows.length}`,
          text: insertUsers(rows.length, (i) => `$${i}`),
          values: rows.flatMap((r) => USER_COLUMNS.map((c) => r[c])),
        });
        await client.query('commit');
        return made;
      } catch (err) {
        await client.query('rollback').catch(() => {});
        throw err;
      } finally {
        client.release();
      }
    },
    usersPage: (a, l, o) =>
      q('page', PAGE.replace('where account_id = $1 order', 'where account_id >= $1 and account_id <= $1 order'), [
        a,
        l,
        o,
      ]),
  };
}

export const sha256 = (s: string) => crypto.createHash('sha256').update(s).digest('hex');

const iso = (v: unknown) => (v === null ? null : new Date(Number(v)).toISOString());
/** An object field: only the members that are not null. */
function members(pairs: [string, unknown][]): Record<string, unknown> {
  const o: Record<string, unknown> = {};
  for (const [k, v] of pairs) if (v !== null) o[k] = v;
  return o;
}

export const userItem = (r: Record<string, any>) => ({
  id: r.id,
  firstName: r.first_name,
  lastName: r.last_name,
  companyName: r.company_name,
  email: r.email,
  phone: r.phone,
  mobile: r.mobile,
  hourlyRate: r.hourly_rate === null ? null : Number(r.hourly_rate),
  active: Number(r.active),
  colour: r.colour,
  isAssignable: r.is_assignable === 1,
  role: { id: r.role_id },
  status: members([
    ['message', r.status_message],
    ['timestamp', r.status_timestamp],
  ]),
  account: { id: r.account_id },
  deleted: r.deleted === 1,
  // Every item of a collection with custom fields carries them; the bench defines none.
  customFields: {},
});

export const jobItem = (r: Record<string, any>) => ({
  id: r.id,
  title: r.title,
  reference: r.reference,
  description: r.description,
  client: r.client_id === null ? null : { id: r.client_id },
  site: r.site_id === null ? null : { id: r.site_id },
  status: { id: r.status_id },
  priority: r.priority,
  orderNumber: r.order_number,
  address: members([
    ['line1', r.address_line1],
    ['line2', r.address_line2],
    ['city', r.address_city],
    ['region', r.address_region],
    ['postcode', r.address_postcode],
    ['country', r.address_country],
    ['location', r.address_lat === null ? null : { lat: Number(r.address_lat), lng: Number(r.address_lng) }],
  ]),
  dueDate: r.due_date,
  createdBy: r.created_by === null ? null : { id: r.created_by },
  account: { id: r.account_id },
  created: iso(r.created),
  modified: iso(r.modified),
  deleted: r.deleted === 1,
  customFields: {},
});
