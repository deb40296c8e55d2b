/**
 * The tenant isolation matrix (docs/reliability.md, "Tenant isolation").
 *
 * For every registered collection (iterated from `collections`, so one added later is covered,
 * and fails here until it has a factory below) and every method, account A's token used on
 * account B's ids never reaches B's data:
 *
 * - GET /c/ID is 404 (1031); GET /c with `where` filters that match B's data (its id, a text
 *   value unique to B, its account, an `or` of them) is empty, while the same filters do match
 *   with B's own token and A's equivalents match with A's token (so an empty answer is not vacuous);
 * - PATCH /c, PATCH /c/ID, DELETE /c, DELETE /c/ID (also through X-Method, and smuggled in
 *   a batch or behind A's own id in the URL) fail, 1047 on `id`;
 * - every association field of the collection pointing at B's items, on POST and PATCH of A's
 *   items, fails with 1045 naming the field (1042 for read-only ones, 1052 for a user's account);
 * - actions on B's ids are 404/405; download links of B's files with tampered parts are 403;
 * - cross-tenant roles: A's Administrator, Employee and Contractor are nobody in B;
 * - finally B's data (and A's) read with their own tokens, `fields=*,[*]`, is unchanged.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { sql } from 'kysely';
import { registry } from '../src/collections/index.js';
import type { Collection } from '../src/collections/machinery/collection.js';
import { validateItem } from '../src/collections/machinery/validate.js';
import {
  DIALECTS,
  addUser,
  call,
  createTenant,
  createTestApp,
  errorsOf,
  newUser,
  skipUnless,
  type Tenant,
  type TestApp,
} from './helpers.js';

type Obj = Record<string, unknown>;
/** One item of a tenant per table (`users` -> an Employee's id, `jobs` -> a job's id, ...). */
type Seed = Record<string, number>;

interface Side {
  tenant: Tenant;
  seed: Seed;
  /** The value unique to this tenant stored in each collection's `text` field. */
  unique: Record<string, string>;
  employeeId: number;
  employeeToken: string;
  contractorId: number;
  contractorToken: string;
}

/**
 * How the matrix makes and changes an item of each collection: all from the declaration (its
 * `example` with its references pointed at the tenant's own items, its text field set to a value
 * unique to the tenant), so a collection added later is covered without touching this file.
 */
interface Factory {
  item(side: Side, unique: string): Obj;
  text: string;
  patch(unique: string): Obj;
  create?(t: TestApp, token: string, item: Obj): Promise<{ status: number; body: any }>;
  /** The members `create` can carry (the rest cannot be sent on create at all). */
  createFields?: string[];
  /** Expected error code when an association names another account on update, where not 1045. */
  updateCodes?: Record<string, number>;
}

const ref = (id: number) => ({ id });

/** Raw upload: `POST /files/upload?name=&job=` (docs/files.md). */
async function uploadFile(t: TestApp, token: string, item: Obj) {
  const q = new URLSearchParams({ name: String(item.name) });
  const job = item.job as { id: number } | null | undefined;
  if (job) q.set('job', String(job.id));
  const res = await t.app.inject({
    method: 'POST',
    url: `/files/upload?${q}`,
    payload: crypto.randomBytes(64),
    headers: { authorization: `Bearer ${token}`, 'x-version': '1.0', 'content-type': 'application/octet-stream' },
  });
  return { status: res.statusCode, body: res.json() };
}

/** Multipart upload with a `job` field, built by hand. */
async function uploadMultipart(t: TestApp, token: string, name: string, job: number) {
  const boundary = `----fsm${crypto.randomBytes(8).toString('hex')}`;
  const payload = Buffer.concat([
    Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="job"\r\n\r\n${job}\r\n`),
    Buffer.from(
      `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${name}"\r\nContent-Type: text/plain\r\n\r\n`,
    ),
    crypto.randomBytes(32),
    Buffer.from(`\r\n--${boundary}--\r\n`),
  ]);
  const res = await t.app.inject({
    method: 'POST',
    url: '/files/upload',
    payload,
    headers: {
      authorization: `Bearer ${token}`,
      'x-version': '1.0',
      'content-type': `multipart/form-data; boundary=${boundary}`,
    },
  });
  return { status: res.statusCode, body: res.json() };
}

/** Collections created through an action (`createVia`), by the action's name, and the members it carries. */
const CREATORS: Record<string, { create: NonNullable<Factory['create']>; fields: string[] }> = {
  upload: { create: uploadFile, fields: ['name', 'job'] },
};

/** What a seeded item needs before the items that follow can reference it (a payment needs an issued invoice). */
const AFTER_SEED: Record<string, (t: TestApp, token: string, id: number) => Promise<unknown>> = {
  invoices: (t, token, id) => call(t.app, token, 'POST', `/invoices/${id}/issue`),
};

/** Where a collection's own rules answer an association of another account differently from 1045. */
const UPDATE_CODES: Record<string, Record<string, number>> = {
  // A user never moves account: another account's id on PATCH is a conflict on `account`.
  users: { account: 1052 },
};

function factoryOf(c: Collection): Factory {
  const text = c.textField;
  return {
    item: (s, u) => ({ ...c.example((target) => ref(s.seed[registry.get(target)?.table ?? target])), [text]: u }),
    text,
    patch: (u) => ({ [text]: u }),
    create: c.createVia ? CREATORS[c.createVia].create : undefined,
    createFields: c.createVia ? CREATORS[c.createVia].fields : undefined,
    updateCodes: UPDATE_CODES[c.name],
  };
}
/** Collections after the ones their associations point at, so each seed can reference the others. */
function dependencyOrder(): Collection[] {
  const done = new Set<string>();
  const out: Collection[] = [];
  const visit = (c: Collection) => {
    if (done.has(c.name)) return;
    done.add(c.name);
    for (const f of Object.values(c.fields)) {
      const target =
        (f.kind === 'assoc' || f.kind === 'assocList') && !f.readOnly && !f.extended
          ? registry.get(f.target)
          : undefined;
      if (target) visit(target);
    }
    out.push(c);
  };
  matrixCollections.forEach(visit);
  return out;
}

const FACTORIES: Record<string, Factory> = Object.fromEntries(registry.list.map((c) => [c.name, factoryOf(c)]));

/**
 * Read-only collections (events, deliveries) are written by the server only: every write method
 * is 405 before any id is looked at. Their isolation is tested beside them (events.test.ts,
 * webhooks.test.ts).
 */
// Append-only collections (locations: PATCH and DELETE 405) are tested beside them (locations.test.ts).
const matrixCollections = registry.list.filter((c) => !c.readOnly && !c.appendOnly);

/** Every association field of a collection, with whether a client may write it. */
function associations(c: Collection) {
  return Object.entries(c.fields).flatMap(([name, field]) =>
    field.kind === 'assoc' || field.kind === 'assocList'
      ? [{ name, table: field.table, list: field.kind === 'assocList', readOnly: !!field.readOnly }]
      : [],
  );
}

for (const dialect of DIALECTS) {
  describe(`tenant isolation matrix (${dialect})`, { skip: skipUnless(dialect) }, () => {
    let t: TestApp;
    let A: Side;
    let B: Side;
    const snapshots = new Map<string, unknown>();
    /** (collection × method × case) checks, counted as they pass. */
    const tally = new Map<string, number>();
    let total = 0;

    /** Runs one check; counts it under `group`. */
    async function check(group: string, label: string, fn: () => Promise<void>) {
      try {
        await fn();
      } catch (err) {
        (err as Error).message = `[${group}] ${label}: ${(err as Error).message}`;
        throw err;
      }
      tally.set(group, (tally.get(group) ?? 0) + 1);
      total++;
    }

    const get = (token: string, url: string) => call(t.app, token, 'GET', url);
    const q = (where: string) => `where=${encodeURIComponent(where)}`;
    /** A refused write: the failure envelope with exactly these `code:field` errors. */
    const failsWith = (res: { status: number; body: any; raw?: string }, expected: string[]) => {
      assert.equal(res.status, 422, res.raw);
      assert.equal(res.body.result, 'failure');
      assert.deepEqual(errorsOf(res), expected);
    };
    const apiError = (res: { status: number; body: any; raw: string }, status: number, code: number) => {
      assert.equal(res.status, status, res.raw);
      assert.equal(res.body.result, 'error');
      assert.equal(res.body.error.code, code);
    };

    /** Everything a tenant has, read in full with its own Administrator token (download links aside: they are fresh per read). */
    async function snapshot(side: Side) {
      const out: Obj = {};
      for (const c of registry.list) {
        const res = await get(side.tenant.token, `/${c.name}?fields=*,[*]&recordsPerPage=1000&sort=id`);
        assert.equal(res.status, 200, res.raw);
        out[c.name] = (res.body[c.name] as Obj[]).map(({ downloadUrl: _, ...rest }) => rest);
      }
      return out;
    }

    async function seedSide(name: string): Promise<Side> {
      const tenant = await createTenant(t, name);
      const side: Side = {
        tenant,
        seed: { accounts: tenant.accountId, roles: tenant.roleIds.administrator },
        unique: {},
        employeeId: 0,
        employeeToken: '',
        contractorId: 0,
        contractorToken: '',
      };
      for (const c of dependencyOrder()) {
        const factory = FACTORIES[c.name];
        const unique = `${name.toLowerCase()}-${c.name}-${crypto.randomBytes(4).toString('hex')}`;
        side.unique[c.name] = unique;
        const item = factory.item(side, unique);
        const res = factory.create
          ? await factory.create(t, tenant.token, item)
          : await call(t.app, tenant.token, 'POST', `/${c.name}`, { [c.name]: [item] });
        assert.equal(res.status, 200, `seeding ${c.name}: ${JSON.stringify(res.body)}`);
        side.seed[c.table] = res.body[c.name][0].id;
        if (AFTER_SEED[c.name]) await AFTER_SEED[c.name](t, tenant.token, side.seed[c.table]);
      }
      const employee = await addUser(t, tenant, 'employee');
      [side.employeeId, side.employeeToken] = [employee.id, employee.token];
      const contractor = await addUser(t, tenant, 'contractor');
      [side.contractorId, side.contractorToken] = [contractor.id, contractor.token];
      // Give the contractor a visit on the seeded job, so "own" scopes are not empty.
      const v = await call(t.app, tenant.token, 'POST', '/visits', {
        visits: [
          {
            job: ref(side.seed.jobs),
            user: ref(contractor.id),
            label: `${name} contractor visit`,
            startTime: '2030-02-01T09:00:00Z',
            endTime: '2030-02-01T10:00:00Z',
          },
        ],
      });
      assert.equal(v.status, 200, v.raw);
      return side;
    }

    before(async () => {
      t = await createTestApp(dialect);
      t.config.rateLimitApi = 0; // hundreds of requests per token; rate limits have their own tests
      A = await seedSide('Alpha');
      B = await seedSide('Beta');
      snapshots.set('A', await snapshot(A));
      snapshots.set('B', await snapshot(B));
    });
    after(async () => {
      const lines = [...tally].map(([k, n]) => `  ${k}: ${n}`).join('\n');
      console.log(`tenant isolation (${dialect}): ${total} checks (collection × method × case)\n${lines}`);
      await t?.close();
    });

    test("every collection's declared example is a valid item", () => {
      for (const c of matrixCollections) {
        const item = FACTORIES[c.name].item(A, 'x');
        assert.deepEqual(validateItem(c, item, 'create'), [], c.name);
      }
    });

    for (const c of matrixCollections) {
      test(`${c.name}: A's token never reaches B's items`, async () => {
        const factory = FACTORIES[c.name];
        assert.ok(factory, `no factory for collection '${c.name}': add one to FACTORIES`);
        const bId = B.seed[c.table];
        const aId = A.seed[c.table];
        const bUnique = B.unique[c.name];
        const token = A.tenant.token;
        const group = c.name;

        // ---- GET
        await check(group, 'GET /c/ID (control: B reads it)', async () => {
          assert.equal((await get(B.tenant.token, `/${c.name}/${bId}`)).status, 200);
          assert.equal((await get(token, `/${c.name}/${aId}`)).status, 200);
        });
        for (const suffix of ['', '?fields=*,[*]', '?fields=account']) {
          await check(group, `GET /c/ID${suffix}`, async () =>
            apiError(await get(token, `/${c.name}/${bId}${suffix}`), 404, 1031),
          );
        }
        await check(group, 'GET /c/ID with X-Method: GET on POST', async () => {
          apiError(await call(t.app, token, 'POST', `/${c.name}/${bId}`, undefined, { 'x-method': 'GET' }), 404, 1031);
        });
        const filters: [string, string, string][] = [
          ['id', `id=${bId}`, `id=${aId}`],
          [factory.text, `${factory.text}="${bUnique}"`, `${factory.text}="${A.unique[c.name]}"`],
          [
            `${factory.text}~`,
            `${factory.text}~"${bUnique.slice(0, -2)}"`,
            `${factory.text}~"${A.unique[c.name].slice(0, -2)}"`,
          ],
          ['account.id', `account.id=${B.tenant.accountId}`, `account.id=${A.tenant.accountId}`],
          [
            'or',
            `id=${bId} or ${factory.text}="${bUnique}" or account.id=${B.tenant.accountId}`,
            `id=${aId} or id=${bId}`,
          ],
          // Payments have no `deleted` member (PRODUCT §9).
          ...(c.fields.deleted
            ? [
                ['deleted', `deleted=false and id>=${bId} and id<=${bId}`, `deleted=false and id=${aId}`] as [
                  string,
                  string,
                  string,
                ],
              ]
            : []),
        ];
        for (const [name, bWhere, aWhere] of filters) {
          await check(group, `GET /c?where=${name}`, async () => {
            const own = await get(B.tenant.token, `/${c.name}?${q(bWhere)}`);
            assert.ok(
              own.body[c.name]?.some((it: Obj) => it.id === bId),
              `the filter matches B's item for B: ${own.raw}`,
            );
            const mine = await get(token, `/${c.name}?${q(aWhere)}`);
            assert.ok(mine.body.metadata?.recordsCount >= 1, `A's equivalent filter matches A's item: ${mine.raw}`);
            assert.ok(!mine.body[c.name].some((it: Obj) => it.id === bId));
            const res = await get(token, `/${c.name}?${q(bWhere)}&fields=*,[*]`);
            assert.equal(res.status, 200, res.raw);
            assert.deepEqual(res.body[c.name], []);
            assert.equal(res.body.metadata.recordsCount, 0);
          });
        }
        await check(group, 'GET /c (full list, fields=*,[*])', async () => {
          const res = await get(token, `/${c.name}?fields=*,[*]&recordsPerPage=1000`);
          assert.equal(res.status, 200);
          for (const it of res.body[c.name] as Obj[]) assert.equal((it.account as Obj).id, A.tenant.accountId);
          assert.ok(!(res.body[c.name] as Obj[]).some((it) => it.id === bId));
          for (const u of Object.values(B.unique))
            assert.ok(!res.raw.includes(u), `B's value ${u} appears in A's list`);
          assert.ok(!res.raw.includes('Beta'), "B's company name appears in A's list");
        });
        // Every association member of A's items resolves to A's own rows only.
        for (const assoc of associations(c)) {
          await check(group, `GET /c?where=${assoc.name} pointing at B`, async () => {
            if (assoc.list) return; // lists are not filterable
            const target = B.seed[assoc.table];
            assert.ok(target, `no B item for table ${assoc.table}`);
            const res = await get(token, `/${c.name}?${q(`${assoc.name}.id=${target}`)}`);
            assert.equal(res.status, 200, res.raw);
            assert.equal(res.body.metadata.recordsCount, 0);
          });
        }

        // ---- PATCH and DELETE of B's id
        const patchB = factory.patch(`${bUnique}-x`);
        await check(group, 'PATCH /c [{id:B}]', async () =>
          failsWith(await call(t.app, token, 'PATCH', `/${c.name}`, { [c.name]: [{ id: bId, ...patchB }] }), [
            '1047:id',
          ]),
        );
        await check(group, 'PATCH /c/ID', async () =>
          failsWith(await call(t.app, token, 'PATCH', `/${c.name}/${bId}`, { [c.name]: [patchB] }), ['1047:id']),
        );
        await check(group, 'PATCH /c/ID with the id in the body', async () =>
          failsWith(await call(t.app, token, 'PATCH', `/${c.name}/${bId}`, { [c.name]: [{ id: bId, ...patchB }] }), [
            '1047:id',
          ]),
        );
        if (c.fields.deleted)
          await check(group, 'PATCH /c/ID {deleted:true}', async () =>
            failsWith(await call(t.app, token, 'PATCH', `/${c.name}/${bId}`, { [c.name]: [{ deleted: true }] }), [
              '1047:id',
            ]),
          );
        await check(group, 'PATCH /c/A-id with B id in the body', async () => {
          const res = await call(t.app, token, 'PATCH', `/${c.name}/${aId}`, { [c.name]: [{ id: bId, ...patchB }] });
          failsWith(res, ['1041:id']);
        });
        await check(group, 'PATCH /c/B-id with A id in the body', async () => {
          const res = await call(t.app, token, 'PATCH', `/${c.name}/${bId}`, {
            [c.name]: [{ id: aId, ...factory.patch(`${A.unique[c.name]}-x`) }],
          });
          failsWith(res, ['1041:id']);
        });
        await check(group, 'PATCH /c batch [A, B]: all or nothing', async () => {
          const res = await call(t.app, token, 'PATCH', `/${c.name}`, {
            [c.name]: [
              { id: aId, ...factory.patch(`${A.unique[c.name]}-y`) },
              { id: bId, ...patchB },
            ],
          });
          failsWith(res, ['1047:id']);
          assert.deepEqual(res.body.metadata, { receivedItemsCount: 2, validItems: [0], invalidItems: [1] });
        });
        await check(group, 'PATCH via X-Method on POST /c/ID', async () => {
          failsWith(
            await call(t.app, token, 'POST', `/${c.name}/${bId}`, { [c.name]: [patchB] }, { 'x-method': 'PATCH' }),
            ['1047:id'],
          );
        });
        await check(group, 'DELETE /c [{id:B}]', async () =>
          failsWith(await call(t.app, token, 'DELETE', `/${c.name}`, { [c.name]: [{ id: bId }] }), ['1047:id']),
        );
        await check(group, 'DELETE /c/ID', async () =>
          failsWith(await call(t.app, token, 'DELETE', `/${c.name}/${bId}`), ['1047:id']),
        );
        await check(group, 'DELETE /c/ID with a body', async () =>
          failsWith(await call(t.app, token, 'DELETE', `/${c.name}/${bId}`, { [c.name]: [{ id: bId }] }), ['1047:id']),
        );
        await check(group, 'DELETE /c batch [A, B]: all or nothing', async () => {
          const res = await call(t.app, token, 'DELETE', `/${c.name}`, { [c.name]: [{ id: aId }, { id: bId }] });
          failsWith(res, ['1047:id']);
          assert.deepEqual(res.body.metadata, { receivedItemsCount: 2, validItems: [0], invalidItems: [1] });
        });
        await check(group, 'DELETE via X-Method on POST /c/ID', async () =>
          failsWith(await call(t.app, token, 'POST', `/${c.name}/${bId}`, undefined, { 'x-method': 'DELETE' }), [
            '1047:id',
          ]),
        );
        await check(group, 'DELETE via X-Method on POST /c', async () =>
          failsWith(
            await call(t.app, token, 'POST', `/${c.name}`, { [c.name]: [{ id: bId }] }, { 'x-method': 'DELETE' }),
            ['1047:id'],
          ),
        );

        // ---- POST on B's ids: actions (declared or not) are never a way in
        for (const action of [...Object.keys(c.actions ?? {}), 'anything', 'delete', 'restore']) {
          await check(group, `POST /c/ID/${action}`, async () => {
            const res = await call(t.app, token, 'POST', `/${c.name}/${bId}/${action}`, { [c.name]: [patchB] });
            assert.ok(res.status === 404 || res.status === 405, res.raw);
            assert.equal(res.body.result, 'error');
          });
        }
        await check(group, 'POST /c/ID (items never POST)', async () =>
          apiError(await call(t.app, token, 'POST', `/${c.name}/${bId}`, { [c.name]: [patchB] }), 405, 1050),
        );
        await check(group, 'POST /c with B id on a new item', async () => {
          const res = await call(t.app, token, 'POST', `/${c.name}`, {
            [c.name]: [{ id: bId, ...factory.item(A, `${A.unique[c.name]}-z`) }],
          });
          assert.ok(res.status === 422 || res.status === 405, res.raw);
          if (res.status === 422) assert.ok(errorsOf(res).includes('1042:id'));
        });

        // ---- Associations of A's items pointing at B's items
        for (const assoc of associations(c)) {
          const targets = assoc.table === 'roles' ? Object.values(B.tenant.roleIds) : [B.seed[assoc.table]];
          assert.ok(
            targets.every((x) => typeof x === 'number'),
            `no item of B for table '${assoc.table}' (field ${c.name}.${assoc.name})`,
          );
          for (const target of targets) {
            const own = A.seed[assoc.table];
            const value = assoc.list ? [ref(own), ref(target)] : ref(target);
            const createCode = assoc.readOnly ? 1042 : 1045;
            const updateCode = assoc.readOnly ? 1042 : (factory.updateCodes?.[assoc.name] ?? 1045);
            await check(group, `POST /c with ${assoc.name} -> B's ${assoc.table} ${target}`, async () => {
              const item = { ...factory.item(A, `${A.unique[c.name]}-n${target}`), [assoc.name]: value };
              if (factory.create) {
                if (factory.createFields?.includes(assoc.name))
                  failsWith(await factory.create(t, token, item), [`${createCode}:${assoc.name}`]);
                // Members the create action cannot carry; a JSON POST is refused outright.
                apiError(await call(t.app, token, 'POST', `/${c.name}`, { [c.name]: [item] }), 405, 1050);
              } else {
                failsWith(await call(t.app, token, 'POST', `/${c.name}`, { [c.name]: [item] }), [
                  `${createCode}:${assoc.name}`,
                ]);
              }
            });
            await check(group, `PATCH /c A's item with ${assoc.name} -> B's ${assoc.table} ${target}`, async () => {
              failsWith(
                await call(t.app, token, 'PATCH', `/${c.name}`, { [c.name]: [{ id: aId, [assoc.name]: value }] }),
                [`${updateCode}:${assoc.name}`],
              );
            });
            await check(group, `PATCH /c/A-id with ${assoc.name} -> B's ${assoc.table} ${target}`, async () => {
              failsWith(
                await call(t.app, token, 'PATCH', `/${c.name}/${aId}`, { [c.name]: [{ [assoc.name]: value }] }),
                [`${updateCode}:${assoc.name}`],
              );
            });
          }
        }
      });
    }

    test('files: uploads attached to B, and download links of B tampered with', async () => {
      const group = 'files (upload/download)';
      const token = A.tenant.token;
      await check(group, 'multipart upload with job -> B', async () => {
        failsWith(await uploadMultipart(t, token, 'x.txt', B.seed.jobs), ['1045:job']);
      });
      await check(group, 'raw upload with job -> B', async () => {
        failsWith(await uploadFile(t, token, { name: 'y.txt', job: ref(B.seed.jobs) }), ['1045:job']);
      });
      await check(group, 'POST /files/B-id/upload', async () => {
        const res = await t.app.inject({
          method: 'POST',
          url: `/files/${B.seed.files}/upload?name=z.txt`,
          payload: Buffer.from('z'),
          headers: { authorization: `Bearer ${token}`, 'x-version': '1.0', 'content-type': 'application/octet-stream' },
        });
        assert.equal(res.statusCode, 404, res.body);
        assert.equal(res.json().error.code, 1032);
      });

      const link = async (side: Side) => {
        const res = await get(side.tenant.token, `/files/${side.seed.files}?fields=downloadUrl`);
        return new URL(res.body.files[0].downloadUrl as string);
      };
      const fetch = (u: URL | string) =>
        t.app.inject({ method: 'GET', url: typeof u === 'string' ? u : `${u.pathname}${u.search}` });
      const bLink = await link(B);
      const saved = t.clock.now;
      t.clock.now += 5000; // A's link gets another expiry than B's
      const aLink = await link(A);
      t.clock.now = saved;
      await check(group, 'genuine links work (control)', async () => {
        assert.equal((await fetch(bLink)).statusCode, 200);
        assert.equal((await fetch(aLink)).statusCode, 200);
      });
      const [aAcc, bAcc, aFile, bFile] = [A.tenant.accountId, B.tenant.accountId, A.seed.files, B.seed.files];
      const tampered: [string, string][] = [
        ["B's link, account -> A", `/file-downloads/${aAcc}/${bFile}${bLink.search}`],
        ["B's link, id -> A's file", `/file-downloads/${bAcc}/${aFile}${bLink.search}`],
        ["B's link, account and id -> A's file", `/file-downloads/${aAcc}/${aFile}${bLink.search}`],
        ["A's link, account -> B", `/file-downloads/${bAcc}/${aFile}${aLink.search}`],
        ["A's link, id -> B's file", `/file-downloads/${aAcc}/${bFile}${aLink.search}`],
        ["A's link, path -> B's file", `/file-downloads/${bAcc}/${bFile}${aLink.search}`],
        [
          "B's path, A's expiry with B's signature",
          `/file-downloads/${bAcc}/${bFile}?expires=${aLink.searchParams.get('expires')}&signature=${bLink.searchParams.get('signature')}`,
        ],
        [
          "B's link, expiry extended",
          `/file-downloads/${bAcc}/${bFile}?expires=${Number(bLink.searchParams.get('expires')) + 86400}&signature=${bLink.searchParams.get('signature')}`,
        ],
        ["B's path, no signature", `/file-downloads/${bAcc}/${bFile}?expires=${bLink.searchParams.get('expires')}`],
      ];
      for (const [label, url] of tampered) {
        await check(group, label, async () => {
          const res = await fetch(url);
          assert.equal(res.statusCode, 403, `${url}: ${res.body}`);
          assert.equal(res.json().error.code, 1022);
        });
      }
      await check(group, "A's bearer token on B's download path", async () => {
        const res = await t.app.inject({
          method: 'GET',
          url: `/file-downloads/${bAcc}/${bFile}`,
          headers: { authorization: `Bearer ${token}`, 'x-version': '1.0' },
        });
        assert.equal(res.statusCode, 403, res.body);
      });
    });

    test('roles: an Administrator of A is nobody in B', async () => {
      const group = 'roles (cross-tenant)';
      const bAdmin = B.tenant.adminId;
      const roleTokens: [string, string][] = [
        ['administrator', A.tenant.token],
        ['employee', A.employeeToken],
        ['contractor', A.contractorToken],
      ];
      for (const [role, token] of roleTokens) {
        for (const c of matrixCollections) {
          await check(group, `A ${role}: GET /${c.name}/B-id`, async () => {
            const res = await get(token, `/${c.name}/${B.seed[c.table]}`);
            assert.ok(res.status === 404 || res.status === 403, res.raw);
          });
          await check(group, `A ${role}: DELETE /${c.name}/B-id`, async () => {
            const res = await call(t.app, token, 'DELETE', `/${c.name}/${B.seed[c.table]}`);
            assert.ok(res.status === 422 || res.status === 403, res.raw);
            if (res.status === 422) assert.deepEqual(errorsOf(res), ['1047:id']);
          });
        }
        await check(group, `A ${role}: GET B's Administrator`, async () =>
          apiError(await get(token, `/users/${bAdmin}?fields=*,[*]`), 404, 1031),
        );
        await check(group, `A ${role}: list users with B's roles`, async () => {
          const res = await get(
            token,
            `/users?${q(
              Object.values(B.tenant.roleIds)
                .map((r) => `role.id=${r}`)
                .join(' or '),
            )}`,
          );
          assert.equal(res.status, 200);
          assert.equal(res.body.metadata.recordsCount, 0);
        });
      }
      const admin = A.tenant.token;
      const cases: [string, () => Promise<{ status: number; body: any; raw: string }>][] = [
        [
          "demote B's Administrator",
          () =>
            call(t.app, admin, 'PATCH', '/users', { users: [{ id: bAdmin, role: ref(A.tenant.roleIds.contractor) }] }),
        ],
        [
          "give B's Administrator B's contractor role",
          () =>
            call(t.app, admin, 'PATCH', `/users/${bAdmin}`, { users: [{ role: ref(B.tenant.roleIds.contractor) }] }),
        ],
        [
          "deactivate B's Administrator",
          () => call(t.app, admin, 'PATCH', `/users/${bAdmin}`, { users: [{ deleted: true }] }),
        ],
        [
          "set B's Administrator's password",
          () =>
            call(t.app, admin, 'PATCH', `/users/${bAdmin}`, {
              users: [{ newPassword: 'taken over 12345', newPasswordConfirm: 'taken over 12345' }],
            }),
        ],
        [
          "change B's Administrator's login",
          () =>
            call(t.app, admin, 'PATCH', `/users/${bAdmin}`, {
              users: [
                {
                  login: `stolen-${crypto.randomBytes(3).toString('hex')}`,
                  newPassword: 'taken over 12345',
                  newPasswordConfirm: 'taken over 12345',
                },
              ],
            }),
        ],
        [
          "move B's Administrator into A",
          () => call(t.app, admin, 'PATCH', `/users/${bAdmin}`, { users: [{ account: ref(A.tenant.accountId) }] }),
        ],
        ["delete B's Administrator", () => call(t.app, admin, 'DELETE', '/users', { users: [{ id: bAdmin }] })],
      ];
      for (const [label, run] of cases)
        await check(group, `A administrator: ${label}`, async () => failsWith(await run(), ['1047:id']));
      await check(group, "A administrator: take B's Administrator role", async () => {
        failsWith(
          await call(t.app, admin, 'PATCH', `/users/${A.tenant.adminId}`, {
            users: [{ role: ref(B.tenant.roleIds.administrator) }],
          }),
          ['1045:role'],
        );
      });
      await check(group, 'A administrator: create a user in B as its Administrator', async () => {
        const res = await call(t.app, admin, 'POST', '/users', {
          users: [newUser(B.tenant.accountId, { role: ref(B.tenant.roleIds.administrator) })],
        });
        assert.equal(res.status, 422, res.raw);
        assert.ok(errorsOf(res).includes('1045:account'), res.raw);
      });
      await check(group, "A administrator: join B's workgroup", async () => {
        failsWith(
          await call(t.app, admin, 'PATCH', `/users/${A.tenant.adminId}`, {
            users: [{ workgroups: [ref(B.seed.workgroups)] }],
          }),
          ['1045:workgroups'],
        );
      });
      await check(group, "A employee: take B's Administrator role", async () => {
        const res = await call(t.app, A.employeeToken, 'PATCH', `/users/${A.employeeId}`, {
          users: [{ role: ref(B.tenant.roleIds.administrator) }],
        });
        assert.ok(res.status === 403 || res.status === 422, res.raw);
      });
      await check(group, "A contractor: a visit on B's job", async () => {
        const res = await call(t.app, A.contractorToken, 'POST', '/visits', {
          visits: [{ ...FACTORIES.visits.item(B, 'sneaky'), user: ref(A.contractorId) }],
        });
        assert.equal(res.status, 422, res.raw);
        assert.ok(errorsOf(res).includes('1045:job'), res.raw);
      });
      await check(group, "B's Administrator is still B's Administrator", async () => {
        const res = await get(B.tenant.token, `/users/${bAdmin}?fields=role.name,active,deleted`);
        assert.equal(res.status, 200, res.raw);
        assert.deepEqual(
          [res.body.users[0].role.name, res.body.users[0].active, res.body.users[0].deleted],
          ['Administrator', 1, false],
        );
      });
    });

    test('the database refuses a cross-account reference, and one planted past it never expands', async () => {
      const db = t.database.db;
      // The keys pair the accounts (src/db/migrations/scheme.ts): A's job cannot point at B's items.
      for (const set of [{ client_id: B.seed.clients }, { status_id: B.seed.statuses }]) {
        await check('keys', `A's job set to ${JSON.stringify(set)} by SQL`, () =>
          assert.rejects(
            db
              .updateTable('jobs')
              .set(set)
              .where('account_id', '=', A.tenant.accountId)
              .where('id', '=', A.seed.jobs)
              .execute(),
            (e: { code?: string }) => e.code === '23503' || e.code === 'SQLITE_CONSTRAINT_FOREIGNKEY',
          ),
        );
      }
      // The write path never stores such a row; this plants one with the keys off to prove reads
      // resolve associations inside the caller's account too (src/collections/machinery/read.ts, loadAssoc).
      const job = await db
        .selectFrom('jobs')
        .select(['client_id', 'status_id'])
        .where('id', '=', A.seed.jobs)
        .executeTakeFirstOrThrow();
      const plant = sql`update jobs set client_id = ${B.seed.clients}, status_id = ${B.seed.statuses} where id = ${A.seed.jobs}`;
      if (dialect === 'postgres')
        await db.transaction().execute(async (trx) => {
          await sql`set local session_replication_role = replica`.execute(trx);
          await plant.execute(trx);
        });
      else
        await db.connection().execute(async (c) => {
          await sql`pragma foreign_keys = off`.execute(c);
          await plant.execute(c);
          await sql`pragma foreign_keys = on`.execute(c);
        });
      try {
        await check('defence in depth', "A's job pointing at B's client and status, read with [*]", async () => {
          const res = await get(A.tenant.token, `/jobs/${A.seed.jobs}?fields=*,[*]`);
          assert.equal(res.status, 200, res.raw);
          assert.deepEqual(
            [res.body.jobs[0].client, res.body.jobs[0].status],
            [ref(B.seed.clients), ref(B.seed.statuses)],
          );
          assert.ok(!res.raw.includes(B.unique.clients) && !res.raw.includes(B.unique.statuses), res.raw);
        });
      } finally {
        await db.updateTable('jobs').set(job).where('id', '=', A.seed.jobs).execute();
      }
    });

    test("afterwards: B's data, and A's, read with their own tokens, are unchanged", async () => {
      await check('unchanged', "B's data (fields=*,[*], every collection)", async () =>
        assert.deepEqual(await snapshot(B), snapshots.get('B')),
      );
      await check('unchanged', "A's data (every refused write left nothing)", async () =>
        assert.deepEqual(await snapshot(A), snapshots.get('A')),
      );
    });
  });
}
