import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import sharp from 'sharp';
import { exportAccount } from '../src/accounts/transfer/export.js';
import { IdMap, importAccount } from '../src/accounts/transfer/import.js';
import { registry } from '../src/collections/index.js';
import { mapReferences } from '../src/collections/machinery/transfer.js';
import type { Dialect } from '../src/db/index.js';
import {
  addUser,
  suiteWithTenants,
  appWithTenants,
  call,
  createTestApp,
  DIALECTS,
  PG_URL,
  skipUnless,
  type Tenant,
  type TestApp,
} from './helpers.js';

/** PRODUCT §19: an account's export and import, across databases. */
type Line = Record<string, any>;

export async function exportOf(t: TestApp, accountId: number, files = false): Promise<Line[]> {
  const out: string[] = [];
  await exportAccount(t.database, registry, t.services.blobs, accountId, { files, hidden: true }, (l) => {
    out.push(l);
  });
  return out.map((l) => JSON.parse(l));
}

/** A users line with a login of its own (logins are unique in the whole server). */
const renamed = (l: Line, suffix = '-json'): Line =>
  l.collection === 'users' && l.item.login ? { ...l, item: { ...l.item, login: `${l.item.login}${suffix}` } } : l;

// The import's map of old ids to new ones: appended in the export's ascending order, and still
// right for ids out of that order, repeated, past its first growth, or never seen.
describe('IdMap', () => {
  it('answers every id set, in order or not, and none other', () => {
    const m = new IdMap();
    for (let id = 1; id <= 5000; id += 2) m.set(id, id * 10);
    m.set(2, 7);
    m.set(0, 8);
    m.set(3, 9);
    m.set(2 ** 40, 1);
    for (let id = 5; id <= 4999; id += 2) assert.equal(m.get(id), id * 10);
    assert.equal(m.get(1), 10);
    assert.equal(m.get(2), 7);
    assert.equal(m.get(0), 8);
    assert.equal(m.get(3), 9);
    assert.equal(m.get(2 ** 40), 1);
    for (const id of [4, 5001, 6000, -1, 2 ** 40 + 1]) assert.equal(m.get(id), undefined);
  });
});

async function* linesOf(lines: (Line | string)[]): AsyncIterable<string> {
  for (const l of lines) yield typeof l === 'string' ? l : JSON.stringify(l);
}

/**
 * An export with every id replaced by its item's position in its collection (the n-th client is
 * client n in both exports), signed URLs left out: two exports of the same data compare equal.
 */
export function normalized(lines: Line[]): Line[] {
  const positions = new Map<string, Map<number, number>>();
  const at = (name: string, id: number) => positions.get(name)?.get(id) ?? `unseen ${name} ${id}`;
  for (const l of lines.slice(1)) {
    if (!l.collection) continue;
    if (!positions.has(l.collection)) positions.set(l.collection, new Map());
    const m = positions.get(l.collection)!;
    m.set(l.item.id, m.size + 1);
  }
  const roles = new Map<number, number>(lines[0].account.roles.map((r: { id: number }, i: number) => [r.id, i + 1]));
  const head = {
    ...lines[0],
    account: {
      ...lines[0].account,
      id: 0,
      roles: lines[0].account.roles.map((r: Line) => ({ ...r, id: roles.get(r.id) })),
    },
  };
  if (head.account.logo) head.account.logo = { id: at('files', head.account.logo.id) };
  const ref = (target: string, v: any) =>
    v === null
      ? null
      : target === 'accounts'
        ? { id: 0 }
        : target === 'roles'
          ? { id: roles.get(v.id) }
          : { id: at(target, v.id) };
  return [
    head,
    ...lines.slice(1).map((l) => {
      if (l.file) return { ...l, file: { id: at('files', l.file.id) } };
      const c = registry.get(l.collection)!;
      const item: Line = { id: at(c.name, l.item.id) };
      for (const [name, v] of Object.entries(l.item)) {
        if (name === 'id') continue;
        const f = c.fields[name];
        if (f?.kind === 'assoc') item[name] = ref(f.target, v);
        else if (f?.kind === 'assocList') item[name] = (v as Line[]).map((x) => ref(f.target, x));
        else if (f?.kind === 'computed' && name === 'downloadUrl') item[name] = typeof v;
        else if (f?.kind === 'scalar' && f.references) item[name] = mapReferences(f, v, name, ref);
        else item[name] = v;
      }
      return { collection: l.collection, item };
    }),
  ];
}

const image = (format: 'png' | 'jpeg') => {
  const made = sharp({ create: { width: 8, height: 6, channels: 3, background: '#3366aa' } });
  return (format === 'png' ? made.png() : made.jpeg()).toBuffer();
};

/**
 * An account with something of every kind: references, lists, lines, a deferred charge's invoice,
 * files, custom fields, references inside JSON (a submission's photo and signature, a plan's routes).
 */
export async function fill(t: TestApp, a: Tenant): Promise<void> {
  const post = async (collection: string, items: unknown[]) => {
    const res = await call(t.app, a.token, 'POST', `/${collection}`, { [collection]: items });
    assert.equal(res.status, 200, `${collection}: ${res.raw}`);
    return res.body[collection].map((x: { id: number }) => x.id) as number[];
  };
  await post('customFieldDefinitions', [
    { collection: 'clients', key: 'vat', label: 'VAT', type: 'text', unique: true },
  ]);
  const [skill] = await post('skills', [{ name: 'Gas' }]);
  const crew = await addUser(t, a, 'contractor', {
    skills: [{ id: skill }],
    workingHours: [{ day: 'tue', start: '08:00', end: '17:00' }],
    homeLocation: { lat: 51.5, lng: -0.12 },
    login: `crew-${a.accountId}`,
    newPassword: 'long enough password',
    newPasswordConfirm: 'long enough password',
  });
  await post('workgroups', [{ name: 'Crew', users: [{ id: crew.id }, { id: a.adminId }] }]);
  const [client] = await post('clients', [{ name: 'Jones', customFields: { vat: 'GB1' } }]);
  const [site] = await post('sites', [{ client: { id: client }, name: 'Home' }]);
  const [job] = await post('jobs', [
    {
      title: 'Boiler',
      client: { id: client },
      site: { id: site },
      requiredSkills: [{ id: skill }],
      address: { location: { lat: 51.51, lng: -0.11 } },
    },
  ]);
  const [visit] = await post('visits', [
    {
      job: { id: job },
      user: { id: crew.id },
      label: 'Fit',
      startTime: '2026-12-01T09:00:00Z',
      endTime: '2026-12-01T11:00:00Z',
    },
  ]);
  await post('notes', [{ job: { id: job }, body: 'Bring the ladder' }]);
  const [rate] = await post('taxRates', [{ name: 'VAT', percent: 20 }]);
  const [product] = await post('products', [
    { name: 'Valve', kind: 'material', unitPrice: 12.5, taxRate: { id: rate } },
  ]);
  await post('charges', [
    { job: { id: job }, kind: 'labour', description: 'Work', unitPrice: 10.05, quantity: 1.5 },
    {
      job: { id: job },
      kind: 'material',
      description: 'Valve',
      product: { id: product },
      unitPrice: 12.5,
      quantity: 2,
    },
  ]);
  const [invoice] = await post('invoices', [{ job: { id: job } }]);
  assert.equal((await call(t.app, a.token, 'POST', `/invoices/${invoice}/issue`)).status, 200);
  await post('payments', [{ invoice: { id: invoice }, amount: 5.25, method: 'card', paidAt: '2026-11-20T10:00:00Z' }]);
  await post('quotes', [
    {
      job: { id: job },
      client: { id: client },
      lines: [
        { description: 'New boiler', quantity: 1, unitPrice: 2000, taxRate: { id: rate }, product: { id: product } },
      ],
    },
  ]);
  await post('webhooks', [{ url: 'https://hooks.example.com/x', events: ['jobs.created'], description: 'Zapier' }]);
  const up = await t.app.inject({
    method: 'POST',
    url: `/files/upload?name=photo.jpg&job=${job}`,
    payload: Buffer.alloc(1024 * 1024 + 10, 7),
    headers: { authorization: `Bearer ${a.token}`, 'x-version': '1.0', 'content-type': 'image/jpeg' },
  });
  assert.equal(up.statusCode, 200, up.body);
  // A submission with a photo and a signature: files named inside its answers.
  const uploaded: number[] = [];
  for (const [format, name] of [
    ['jpeg', 'boiler.jpg'],
    ['png', 'signature.png'],
  ] as const) {
    const res = await t.app.inject({
      method: 'POST',
      url: `/files/upload?name=${name}&job=${job}`,
      payload: await image(format),
      headers: { authorization: `Bearer ${a.token}`, 'x-version': '1.0', 'content-type': `image/${format}` },
    });
    assert.equal(res.statusCode, 200, res.body);
    uploaded.push(JSON.parse(res.body).files[0].id);
  }
  const [form] = await post('formTemplates', [
    {
      name: 'Gas safety',
      fields: [
        { key: 'notes', label: 'Notes', type: 'text' },
        { key: 'checks', label: 'Checks', type: 'multiSelect', options: ['flue', 'seals'] },
        { key: 'photos', label: 'Photos', type: 'photo' },
        { key: 'signature', label: 'Signature', type: 'signature' },
      ],
    },
  ]);
  await post('formSubmissions', [
    {
      template: { id: form },
      job: { id: job },
      visit: { id: visit },
      answers: {
        notes: 'All in order',
        checks: ['flue'],
        photos: [{ id: uploaded[0] }],
        signature: { file: { id: uploaded[1] }, name: 'Mrs Jones' },
      },
    },
  ]);
  // A plan: its users, visits and routes name users and visits.
  await post('plans', [{ date: '2026-12-01', users: [{ id: crew.id }], visits: [{ id: visit }], timeLimitSeconds: 1 }]);
  // A logically deleted item is exported too.
  const [gone] = await post('clients', [{ name: 'Gone' }]);
  const deleted = await call(t.app, a.token, 'PATCH', '/clients', { clients: [{ id: gone, deleted: true }] });
  assert.equal(deleted.status, 200, deleted.raw);
}

const pairs: [Dialect, Dialect][] = PG_URL
  ? [
      ['sqlite', 'postgres'],
      ['postgres', 'sqlite'],
    ]
  : [['sqlite', 'sqlite']];

for (const [from, to] of pairs) {
  describe(`account export and import, ${from} to ${to}`, () => {
    let src: TestApp;
    let dst: TestApp;
    let a: Tenant;
    before(async () => {
      ({ t: src, a } = await appWithTenants(from));
      dst = await createTestApp(to);
      await fill(src, a);
    });
    after(async () => {
      await src?.close();
      await dst?.close();
    });

    it('exports everything in reference order, no secrets; the import exports the same lines but for ids', async () => {
      const first = await exportOf(src, a.accountId, true);
      assert.equal(first[0].format, 'fsm-export');
      assert.equal(first[0].version, 1);
      const names = first.slice(1).flatMap((l) => (l.collection ? [l.collection] : []));
      for (const n of [
        'users',
        'skills',
        'workgroups',
        'clients',
        'jobs',
        'charges',
        'invoices',
        'payments',
        'quotes',
        'webhooks',
        'files',
      ])
        assert.ok(names.includes(n), n);
      assert.ok(!names.includes('events') && !names.includes('deliveries'));
      assert.ok(
        names.indexOf('skills') < names.indexOf('users') && names.indexOf('charges') < names.indexOf('invoices'),
      );
      const text = JSON.stringify(first);
      assert.ok(!/whsec_/.test(text), 'no webhook secret');
      assert.ok(first.some((l) => l.collection === 'users' && typeof l.item.passwordHash === 'string'));
      assert.ok(first.some((l) => l.collection === 'clients' && l.item.deleted === true));
      // 1 MiB + 10 bytes: two lines of bytes, the first of exactly 1 MiB; then the two small images, a line each.
      const bytes = first.filter((l) => l.file);
      assert.deepEqual(bytes.map((l) => Buffer.from(l.base64, 'base64').length).slice(0, 2), [1024 * 1024, 10]);
      assert.equal(bytes.length, 4);

      const result = await importAccount(dst.database, registry, dst.services.blobs, linesOf(first));
      assert.equal(result.items, names.length);
      assert.equal(result.webhooks.length, 1);
      assert.match(result.webhooks[0].secret, /^whsec_/);
      const second = await exportOf(dst, result.account.id, true);
      assert.deepEqual(normalized(second), normalized(first));
      // The charges' invoice, deferred, is the imported invoice.
      const charges = second.filter((l) => l.collection === 'charges').map((l) => l.item.invoice);
      const invoice = second.find((l) => l.collection === 'invoices')!.item.id;
      assert.deepEqual(charges, [{ id: invoice }, { id: invoice }]);
      // Numbers kept; the next one follows them.
      assert.equal(second.find((l) => l.collection === 'invoices')!.item.number, 'INV-000001');
      // People keep their sign-in: a password grant works in the new account... once the old one is gone (logins are unique).
      const again = await importAccount(dst.database, registry, dst.services.blobs, linesOf(first)).catch(
        (e: Error) => e,
      );
      assert.ok(again instanceof Error);
      assert.match(again.message, /^line \d+: the login '.*' already exists/);
    });

    it("remaps the references inside JSON: a submission's photo and signature, a plan's users, visits and routes", async () => {
      const first = await exportOf(src, a.accountId, true);
      const result = await importAccount(
        dst.database,
        registry,
        dst.services.blobs,
        linesOf(first.map((l) => renamed(l))),
      );
      const second = await exportOf(dst, result.account.id, true);
      const itemsOf = (lines: Line[], collection: string) =>
        new Map(lines.filter((l) => l.collection === collection).map((l) => [l.item.id as number, l.item]));
      const files = itemsOf(second, 'files');
      const submission = second.find((l) => l.collection === 'formSubmissions')!.item;
      assert.equal(files.get(submission.answers.photos[0].id)?.name, 'boiler.jpg');
      assert.equal(files.get(submission.answers.signature.file.id)?.name, 'signature.png');
      assert.equal(submission.answers.signature.name, 'Mrs Jones');
      assert.deepEqual(submission.answers.checks, ['flue']);
      // Each named file is of the new account, in its database.
      const ids = [submission.answers.photos[0].id, submission.answers.signature.file.id];
      const rows = await dst.database.db
        .selectFrom('files')
        .select(['id', 'account_id'])
        .where('id', 'in', ids)
        .execute();
      assert.deepEqual(
        rows.map((r) => Number(r.account_id)),
        [result.account.id, result.account.id],
      );
      const users = itemsOf(second, 'users');
      const visits = itemsOf(second, 'visits');
      const plan = second.find((l) => l.collection === 'plans')!.item;
      const named = [
        ...plan.users.map((u: Line) => users.get(u.id)),
        ...plan.visits.map((v: Line) => visits.get(v.id)),
        ...plan.routes.flatMap((r: Line) => [
          users.get(r.user.id),
          ...r.steps.map((s: Line) => visits.get(s.visit.id)),
        ]),
        ...plan.unassigned.map((u: Line) => visits.get(u.visit.id)),
      ];
      assert.ok(plan.routes.length === 1 && plan.routes[0].steps.length === 1, JSON.stringify(plan));
      assert.ok(named.length >= 4 && named.every(Boolean), JSON.stringify(plan));
      assert.equal(
        plan.routes[0].user.id,
        [...users.values()].find((u) => u.login === 'crew-' + a.accountId + '-json')?.id,
      );
      // Refused: a reference inside JSON to an item not seen before it.
      const bad = first.map((l) =>
        l.collection === 'plans' ? { ...l, item: { ...l.item, users: [{ id: 999_999 }] } } : renamed(l, '-bad'),
      );
      const err = await importAccount(dst.database, registry, dst.services.blobs, linesOf(bad)).catch((e: Error) => e);
      assert.ok(err instanceof Error);
      assert.match(err.message, /^line \d+: 'users\[0\]' names users 999999, not seen before this line/);
    });

    it('a bad line fails the import with its number and writes nothing', async () => {
      const lines = await exportOf(src, a.accountId);
      const accounts = async () =>
        Number((await sql<{ n: number }>`select count(*) as n from accounts`.execute(dst.database.db)).rows[0].n);
      const before = await accounts();
      const fresh = (l: Line[]) =>
        l.map((x) =>
          x.collection === 'users'
            ? { ...x, item: { ...x.item, login: x.item.login && `${x.item.login}-${Math.random()}` } }
            : x,
        );
      const cases: [(Line | string)[], RegExp][] = [
        [[lines[0], '{"collection":'], /^line 2: is not JSON/],
        [[{ ...lines[0], version: 2 }], /^line 1: is version 2/],
        [[lines[0], { collection: 'nope', item: { id: 1 } }], /^line 2: names no collection/],
        [[lines[0], { collection: 'events', item: { id: 1 } }], /^line 2: names no collection/],
        [
          [lines[0], { collection: 'jobs', item: { id: 1, title: 'x', client: { id: 999 } } }],
          /^line 2: 'client' names clients 999, not seen/,
        ],
        [
          [...fresh(lines).slice(0, 3), { collection: 'clients', item: { id: 5, name: 'x', bogus: 1 } }],
          /^line 4: 'bogus' is no member of clients/,
        ],
      ];
      for (const [input, error] of cases) {
        const err = await importAccount(dst.database, registry, dst.services.blobs, linesOf(input)).catch(
          (e: Error) => e,
        );
        assert.ok(err instanceof Error, String(error));
        assert.match(err.message, error);
      }
      assert.equal(await accounts(), before);
    });
  });
}

const CLI = 'dist/src/cli/index.js';

for (const dialect of DIALECTS) {
  describe(`GET /export, the CLI, and a consistent snapshot (${dialect})`, { skip: skipUnless(dialect) }, () => {
    const { t, a, b } = suiteWithTenants(dialect);
    before(async () => {
      await fill(t, a);
    });
    const env = () => ({ ...process.env, DATA_DIR: t.dataDir, DATABASE_URL: t.config.databaseUrl ?? '' });

    it('GET /export streams the same lines without password hashes or file bytes, to an Administrator with every .read', async () => {
      const res = await t.app.inject({
        method: 'GET',
        url: '/export',
        headers: { authorization: `Bearer ${a.token}`, 'x-version': '1.0' },
      });
      assert.equal(res.statusCode, 200, res.body);
      assert.match(String(res.headers['content-type']), /^application\/x-ndjson/);
      const lines = res.body
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l));
      assert.ok(!res.body.includes('passwordHash') && !lines.some((l) => l.file));
      const file = lines.find((l) => l.collection === 'files');
      assert.match(file.item.downloadUrl, /^http/);
      const cli = (await exportOf(t, a.accountId)).map((l) => {
        if (l.collection === 'users') delete l.item.passwordHash;
        return l;
      });
      assert.deepEqual(normalized(lines), normalized(cli));
      assert.ok(
        !res.body.includes(`"companyName":"${(lines[0].account.companyName as string).replace('Alpha', 'Beta')}"`),
      );
      // An Employee, or an Administrator's token without one .read: 403.
      const employee = await addUser(t, a, 'employee');
      const refused = await call(t.app, employee.token, 'GET', '/export');
      assert.equal(refused.status, 403);
      const partial = await a.tokenFor(a.adminId, ['jobs.read', 'clients.read']);
      const missing = await call(t.app, partial, 'GET', '/export');
      assert.equal(missing.status, 403);
      assert.equal((await call(t.app, undefined, 'GET', '/export')).status, 401);
      assert.equal((await call(t.app, a.token, 'POST', '/export')).status, 405);
      void b;
    });

    it('an export taken while the API writes is one snapshot: every reference resolves, later items absent', async () => {
      const lines: Line[] = [];
      let wrote = false;
      await exportAccount(t.database, registry, t.services.blobs, a.accountId, { hidden: true }, async (l) => {
        lines.push(JSON.parse(l));
        if (!wrote) {
          wrote = true;
          const c = await call(t.app, a.token, 'POST', '/clients', {
            clients: [{ name: 'Written during the export' }],
          });
          assert.equal(c.status, 200, c.raw);
          const j = await call(t.app, a.token, 'POST', '/jobs', {
            jobs: [{ title: 'During', client: { id: c.body.clients[0].id } }],
          });
          assert.equal(j.status, 200, j.raw);
        }
      });
      assert.ok(!JSON.stringify(lines).includes('Written during the export'));
      assert.ok(!JSON.stringify(normalized(lines)).includes('unseen'));
      // The next export has them.
      assert.ok(JSON.stringify(await exportOf(t, a.accountId)).includes('Written during the export'));
    });

    it('fsm accounts export | fsm accounts import: a new account; SIGKILL halfway leaves none', async () => {
      const { execFileSync, spawn } = await import('node:child_process');
      const out = execFileSync(
        process.execPath,
        [CLI, 'accounts', 'export', '--account', String(a.accountId), '--files'],
        {
          env: env(),
          maxBuffer: 64 * 1024 * 1024,
        },
      ).toString();
      const lines = out
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l));
      assert.equal(lines[0].format, 'fsm-export');
      assert.ok(lines.some((l) => l.file));
      // Logins are unique in the whole server: imported here, the users need new ones.
      const renamed = lines.map((l) =>
        l.collection === 'users' && l.item.login ? { ...l, item: { ...l.item, login: `${l.item.login}-copy` } } : l,
      );
      const input = renamed.map((l) => JSON.stringify(l)).join('\n');
      const accounts = async () =>
        Number((await sql<{ n: number }>`select count(*) as n from accounts`.execute(t.database.db)).rows[0].n);
      const before = await accounts();
      // Killed while it reads: the header and some items written, the rest never comes.
      const child = spawn(process.execPath, [CLI, 'accounts', 'import'], {
        env: env(),
        stdio: ['pipe', 'pipe', 'pipe'],
      });
      const exited = new Promise((resolve) => child.on('exit', resolve));
      child.stdin.write(
        renamed
          .slice(0, Math.ceil(renamed.length / 2))
          .map((l) => JSON.stringify(l))
          .join('\n') + '\n',
      );
      await new Promise((r) => setTimeout(r, 1500));
      child.kill('SIGKILL');
      await exited;
      assert.equal(await accounts(), before, 'nothing of the killed import is left');
      const done = execFileSync(process.execPath, [CLI, 'accounts', 'import'], { env: env(), input }).toString();
      const result = JSON.parse(done);
      assert.equal(await accounts(), before + 1);
      assert.equal(result.webhooks.length, 1);
      const again = await exportOf(t, result.account.id, true);
      const copy = (x: Line[]) =>
        normalized(x).map((l) =>
          l.collection === 'users' && l.item.login
            ? { ...l, item: { ...l.item, login: String(l.item.login).replace(/-copy$/, '') } }
            : l,
        );
      assert.deepEqual(copy(again), normalized(lines));
    });
  });
}
