import { createAccount } from '../src/accounts/service.js';
import { ALL_PERMISSIONS } from '../src/collections/index.js';
import { searchTextOf } from '../src/collections/machinery/search.js';
import { hashToken, randomToken } from '../src/auth/secrets.js';
import { registry } from '../src/collections/index.js';
import type { Caller, Columns, Item } from '../src/collections/machinery/collection.js';
import { untyped } from '../src/db/tx.js';
import { createServices } from '../src/services.js';
import { loadConfig } from '../src/config.js';
import { itemToRow, validateItem } from '../src/collections/machinery/validate.js';
import { withTransaction } from '../src/db/tx.js';
import type { Database } from '../src/db/index.js';

/** How big one seeded account is. */
export interface AccountSize {
  users: number;
  clients: number;
  jobs: number;
  visits: number;
}

export interface SeededAccount {
  accountId: number;
  adminId: number;
}

/** A deterministic pseudo-random sequence, so every seeded database holds the same data. */
export function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const FIRST = [
  'Ada',
  'Bob',
  'Chen',
  'Dara',
  'Eve',
  'Femi',
  'Gita',
  'Hugo',
  'Iris',
  'Jon',
  'Kemal',
  'Lena',
  'Mia',
  'Noor',
  'Omar',
  'Pia',
  'Raj',
  'Sara',
  'Tom',
  'Uma',
  'Vik',
  'Wen',
  'Yara',
  'Zoe',
];
const LAST = [
  'Smith',
  'Jones',
  'Taylor',
  'Brown',
  'Williams',
  'Wilson',
  'Johnson',
  'Davies',
  'Patel',
  'Wright',
  'Khan',
  'Evans',
  'Thomas',
  'Roberts',
  'Walker',
  'Green',
  'Hall',
  'Wood',
  'Clarke',
  'Hughes',
];
const CITIES = [
  'Leeds',
  'York',
  'Bristol',
  'Bath',
  'Derby',
  'Hull',
  'Leicester',
  'Norwich',
  'Oxford',
  'Reading',
  'Sheffield',
  'Exeter',
];
/** Job titles as a plumbing and heating firm writes them; 2 of 24 contain "pump". */
const WORK = [
  'Boiler service',
  'Replace radiator valve',
  'Fix leaking tap',
  'Install heat pump',
  'Unblock drain',
  'Gas safety check',
  'Power flush',
  'Replace thermostat',
  'Bathroom refit',
  'Repair sump pump',
  'Burst pipe',
  'Annual inspection',
  'New shower',
  'Check pressure',
  'Fit water softener',
  'Replace cylinder',
  'Descale system',
  'Kitchen sink install',
  'Toilet repair',
  'Bleed radiators',
  'Underfloor heating',
  'Outside tap',
  'Meter relocation',
  'Survey and quote',
];
const PRIORITIES = ['low', 'normal', 'normal', 'normal', 'high', 'urgent'];
const STATES = ['scheduled', 'completed', 'completed', 'travelling', 'onSite', 'cancelled'];

const pick = <T>(r: () => number, xs: readonly T[]): T => xs[Math.floor(r() * xs.length)];
const phone = (r: () => number) => `+4477009${String(Math.floor(r() * 100000)).padStart(5, '0')}`;

export function adminContext(a: SeededAccount, clientId: string, now = Date.now()): Caller {
  return {
    accountId: a.accountId,
    userId: a.adminId,
    role: 'administrator',
    permissions: new Set(ALL_PERMISSIONS),
    clientId,
    now,
    publicUrl: '',
  };
}

/** A valid new user without login or password (scrypt is deliberately slow; W4 posts the same). */
export function userItem(r: () => number, accountId: number) {
  const first = pick(r, FIRST);
  const last = pick(r, LAST);
  return {
    account: { id: accountId },
    firstName: first,
    lastName: last,
    email: `${first}.${last}.${Math.floor(r() * 1e6)}@example.com`.toLowerCase(),
    mobile: phone(r),
    hourlyRate: 15 + Math.floor(r() * 40),
    isAssignable: r() < 0.7,
  };
}

/**
 * A point in Great Britain's box (lat 50–58.5, lng −5.5–1.7, 5 decimals), for `near` (bench/places.ts):
 * drawn from a generator of its own, so the other values of a seed stay as they were.
 */
const geo = rng(2929);
export function ukLocation() {
  return {
    lat: Math.round((50 + geo() * 8.5) * 1e5) / 1e5,
    lng: Math.round((-5.5 + geo() * 7.2) * 1e5) / 1e5,
  };
}

export function jobItem(r: () => number, clientIds: number[]) {
  return {
    title: `${pick(r, WORK)} - ${pick(r, CITIES)}`,
    description: r() < 0.5 ? `Customer reports: ${pick(r, WORK).toLowerCase()} needed, access via side gate.` : null,
    client: clientIds.length ? { id: pick(r, clientIds) } : null,
    priority: pick(r, PRIORITIES),
    address: {
      line1: `${1 + Math.floor(r() * 200)} High Street`,
      city: pick(r, CITIES),
      postcode: `LS${1 + Math.floor(r() * 20)} 4AB`,
      country: 'GB',
      location: ukLocation(),
    },
    dueDate: `2025-${String(1 + Math.floor(r() * 12)).padStart(2, '0')}-${String(1 + Math.floor(r() * 28)).padStart(2, '0')}`,
  };
}

function visitItem(r: () => number, jobId: number, userIds: number[]) {
  const start = Date.UTC(2025, 0, 1) + Math.floor(r() * 365) * 86400000 + (8 + Math.floor(r() * 9)) * 3600000;
  return {
    job: { id: jobId },
    user: r() < 0.9 ? { id: pick(r, userIds) } : null,
    label: pick(r, ['First visit', 'Follow-up', 'Parts fitted', 'Inspection', 'Return visit']),
    startTime: new Date(start).toISOString(),
    endTime: new Date(start + (1 + Math.floor(r() * 4)) * 3600000).toISOString(),
    state: pick(r, STATES),
  };
}

/**
 * Creates items as the write machinery would, only many rows per statement: each item passes the
 * collection's validateItem and itemToRow, and `extra` sets the columns its rules fill (defaults
 * from other rows, generated references). One transaction per 1,000 items; returns the new ids.
 */
async function bulkCreate(
  database: Database,
  collection: string,
  ctx: Caller,
  item: (i: number) => Item,
  n: number,
  extra: (i: number, row: Columns) => void,
  progress: (done: number) => void,
): Promise<number[]> {
  const c = registry.get(collection)!;
  const ids: number[] = [];
  for (let i = 0; i < n; i += 1000) {
    const rows: Columns[] = [];
    for (let k = i; k < Math.min(n, i + 1000); k++) {
      const it = item(k);
      const errors = validateItem(c, it, 'create');
      if (errors.length) throw new Error(`seeding ${collection}: ${JSON.stringify(errors)}`);
      const row = itemToRow(c, it, 'create', ctx.now);
      row.account_id = ctx.accountId;
      extra(k, row);
      // The words `q` searches, as the write pipeline writes them (PRODUCT §12).
      if (c.search) row.search_text = searchTextOf(c, row);
      rows.push(row);
    }
    await withTransaction(database, async (db) => {
      for (let k = 0; k < rows.length; k += 100) {
        const out = await untyped(db)
          .insertInto(c.table)
          .values(rows.slice(k, k + 100))
          .returning('id')
          .execute();
        for (const r of out) ids.push(r.id as number);
      }
    });
    progress(ids.length);
  }
  return ids;
}

/** Registers the benchmark's certified OAuth client, as test/helpers.ts createClient does. */
export async function createBenchClient(database: Database): Promise<{ clientId: string; clientSecret: string }> {
  const clientId = `bench-${randomToken(6)}`;
  const clientSecret = randomToken();
  await database.db
    .insertInto('oauth_clients')
    .values({
      client_id: clientId,
      secret_hash: hashToken(clientSecret),
      name: 'Benchmark',
      redirect_uris: JSON.stringify(['http://127.0.0.1/callback']),
      permissions: JSON.stringify(ALL_PERMISSIONS),
      allow_permission_choice: 0,
      certified: 1,
      revoked: 0,
      created: Date.now(),
    })
    .execute();
  return { clientId, clientSecret };
}

/**
 * One account of the given size, through the project's own code: createAccount (roles, statuses,
 * the Administrator), then users, clients, jobs and visits validated and mapped by the machinery.
 */
export async function seedAccount(
  database: Database,
  n: number,
  size: AccountSize,
  clientId: string,
  log: (msg: string) => void,
): Promise<SeededAccount> {
  const r = rng(n * 7919);
  const { account, user } = await createAccount(createServices(loadConfig({} as NodeJS.ProcessEnv), database).writer, {
    companyName: `Bench Plumbing ${n}`,
    firstName: 'Ada',
    lastName: 'Admin',
    mobile: '+447700900001',
    login: `bench-admin-${n}-${randomToken(4)}`,
    password: randomToken(),
  });
  const a = { accountId: account.id, adminId: user.id };
  const ctx = adminContext(a, clientId);
  let last = Date.now();
  const progress = (what: string, total: number) => (done: number) => {
    if (Date.now() - last > 5000 || done === total) {
      last = Date.now();
      log(`  account ${n}: ${what} ${done}/${total}`);
    }
  };
  const roles = await database.db
    .selectFrom('roles')
    .select(['id', 'kind'])
    .where('account_id', '=', a.accountId)
    .execute();
  const employee = roles.find((x) => x.kind === 'employee')!.id;
  const contractor = roles.find((x) => x.kind === 'contractor')!.id;
  const statuses = await database.db
    .selectFrom('statuses')
    .select('id')
    .where('account_id', '=', a.accountId)
    .orderBy('id')
    .execute();
  const userIds = await bulkCreate(
    database,
    'users',
    ctx,
    () => userItem(r, a.accountId),
    size.users - 1,
    (_i, row) => (row.role_id = r() < 0.2 ? contractor : employee),
    progress('users', size.users - 1),
  );
  userIds.push(a.adminId);
  const clientIds = await bulkCreate(
    database,
    'clients',
    ctx,
    () => ({
      name: `${pick(r, FIRST)} ${pick(r, LAST)}`,
      phone: phone(r),
      address: { line1: `${1 + Math.floor(r() * 200)} Mill Lane`, city: pick(r, CITIES), location: ukLocation() },
    }),
    size.clients,
    () => {},
    progress('clients', size.clients),
  );
  const jobIds = await bulkCreate(
    database,
    'jobs',
    ctx,
    () => jobItem(r, clientIds),
    size.jobs,
    (i, row) => {
      row.status_id = pick(r, statuses).id;
      row.reference = `J-${String(i + 1).padStart(6, '0')}`;
      row.created_by = a.adminId;
    },
    progress('jobs', size.jobs),
  );
  // The references used so far, so jobs created later continue the sequence (as the jobs collection would).
  await database.db
    .insertInto('counters')
    .values({ account_id: a.accountId, name: 'jobs', value: size.jobs })
    .onConflict((oc) => oc.columns(['account_id', 'name']).doUpdateSet({ value: size.jobs }))
    .execute();
  await bulkCreate(
    database,
    'visits',
    ctx,
    (i) => visitItem(r, jobIds[i % jobIds.length], userIds),
    size.visits,
    () => {},
    progress('visits', size.visits),
  );
  return a;
}
