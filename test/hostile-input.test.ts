import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import { registry } from '../src/collections/index.js';
import type { Collection } from '../src/collections/machinery/collection.js';
import { Raw, SEED, bodyOf, edgeInteger, listQueryOf, obj, rarely, runs, toJson, type J } from './arbitraries.js';
import {
  DIALECTS,
  call,
  createTenant,
  createTestApp,
  newUser,
  skipUnless,
  type Tenant,
  type TestApp,
} from './helpers.js';

/**
 * Hostile input through the real app (app.inject), on both dialects: random and adversarial
 * query modifiers on every collection, and random write bodies for every registered collection
 * (so collections added later are covered). Never a 5xx; always the envelope and the headers;
 * a write that is not 200 changes nothing, and nothing ever changes in another account.
 */
const all = [...registry.list];

function assertEnvelope(res: LightMyRequestResponse, c: Collection, what: string): any {
  assert.ok(res.statusCode < 500, `${what} -> ${res.statusCode} ${res.body.slice(0, 300)}`);
  assert.equal(res.headers['content-type'], 'application/json;charset=UTF-8', what);
  assert.equal(res.headers['cache-control'], 'no-store');
  assert.equal(res.headers['pragma'], 'no-cache');
  assert.equal(res.headers['x-version'], '1.0');
  assert.equal(res.headers['x-content-type-options'], 'nosniff');
  const body = JSON.parse(res.body);
  if (res.statusCode === 200) {
    assert.equal(body.result, 'success', what);
    assert.ok(Array.isArray(body[c.name]), what);
    assert.equal(typeof body.metadata, 'object');
  } else if (body.result === 'failure') {
    assert.equal(res.statusCode, 422, what);
    assert.ok(body.failures.length > 0);
    for (const f of body.failures)
      for (const e of f.errors) assert.ok(Number.isInteger(e.code) && e.type === 'validation', what);
    assert.deepEqual(Object.keys(body.metadata).sort(), ['invalidItems', 'receivedItemsCount', 'validItems']);
    for (const f of body.failures) {
      if (f.rawData && typeof f.rawData === 'object')
        assert.ok(!Object.hasOwn(f.rawData, 'newPassword'), 'write-only members are never echoed');
    }
  } else {
    assert.equal(body.result, 'error', what);
    assert.ok(
      Number.isInteger(body.error.code) &&
        typeof body.error.message === 'string' &&
        typeof body.error.type === 'string',
      what,
    );
  }
  return body;
}

for (const dialect of DIALECTS) {
  describe(`hostile input through the app (${dialect})`, { skip: skipUnless(dialect) }, () => {
    let t: TestApp;
    let a: Tenant;
    let b: Tenant;
    const ids = new Map<string, number[]>();
    const tables = [...new Set([...all.map((c) => c.table), 'workgroup_members', 'counters'])];

    /** Every row of the account's tables, as text: any change at all shows. */
    async function snapshot(accountId: number): Promise<string> {
      const parts: string[] = [];
      for (const table of tables) {
        const rows = await (t.database.db as any)
          .selectFrom(table)
          .selectAll()
          .where('account_id', '=', accountId)
          .execute()
          .catch(() => []);
        parts.push(
          `${table}:${rows
            .map((r: unknown) => JSON.stringify(r))
            .sort()
            .join('\n')}`,
        );
      }
      return parts.join('\n');
    }

    before(async () => {
      t = await createTestApp(dialect);
      t.config.rateLimitApi = 0;
      a = await createTenant(t, 'Alpha');
      b = await createTenant(t, 'Beta');
      // A few items to read and patch in both accounts (best effort: collections added later start empty).
      for (const tenant of [a, b]) {
        const seed: Record<string, unknown[]> = {
          users: [newUser(tenant.accountId), newUser(tenant.accountId, { firstName: 'Zoë', email: 'z@example.com' })],
          clients: [{ name: 'Client One' }],
          jobs: [{ title: 'Job one' }, { title: 'Job two', priority: 'high' }],
          workgroups: [{ name: 'Crew' }],
        };
        for (const [name, items] of Object.entries(seed))
          if (registry.get(name)) await call(t.app, tenant.token, 'POST', `/${name}`, { [name]: items });
        const job = (await call(t.app, tenant.token, 'GET', '/jobs')).body?.jobs?.[0];
        if (job) {
          await call(t.app, tenant.token, 'POST', '/visits', {
            visits: [
              {
                job: { id: job.id },
                label: 'Visit',
                startTime: '2024-05-01T09:00:00Z',
                endTime: '2024-05-01T10:00:00Z',
              },
            ],
          });
        }
      }
      for (const c of all) {
        const found: number[] = [];
        for (const tenant of [a, b]) {
          const r = await call(t.app, tenant.token, 'GET', `/${c.name}?recordsPerPage=1000`);
          found.push(...(r.body?.[c.name] ?? []).map((x: { id: number }) => x.id));
        }
        ids.set(c.name, found);
      }
    });
    after(() => t?.close());

    test(`GET with hostile where/fields/sort/page (seed ${SEED})`, async (tc) => {
      let n = 0;
      const statuses = new Map<number, number>();
      const arb = fc.constantFrom(...all).chain((c) =>
        fc.tuple(
          fc.constant(c.name),
          listQueryOf(c),
          rarely(
            fc.oneof(
              fc.constantFrom(...(ids.get(c.name)!.length ? ids.get(c.name)! : [1]), 0, 2 ** 53).map(String),
              edgeInteger.map((r) => r.text),
            ),
          ),
        ),
      );
      await fc.assert(
        fc.asyncProperty(arb, async ([name, query, item]) => {
          const c = registry.get(name)!;
          n++;
          const url = `/${c.name}${item === null ? '' : `/${item}`}?${query}`;
          const res = await t.app.inject({
            method: 'GET',
            url,
            headers: { authorization: `Bearer ${a.token}`, 'x-version': '1.0' },
          });
          statuses.set(res.statusCode, (statuses.get(res.statusCode) ?? 0) + 1);
          const body = assertEnvelope(res, c, `GET ${url}`);
          if (res.statusCode === 200) {
            for (const it of body[c.name])
              if (it.account) assert.equal(it.account.id, a.accountId, 'another account leaked');
            const m = body.metadata;
            assert.ok([m.page, m.pagesCount, m.recordsPerPage, m.recordsCount].every(Number.isSafeInteger), url);
          } else {
            assert.ok([400, 404].includes(res.statusCode), `${url} -> ${res.statusCode}`);
          }
          if (
            item !== null &&
            /^\d+$/.test(item) &&
            (BigInt(item) < 1n || BigInt(item) > 2n ** 31n - 1n) &&
            res.statusCode !== 400
          ) {
            assert.equal(body.error?.code, 1031, `an id no item can have is 404 1031: ${url}`);
          }
        }),
        { seed: SEED, numRuns: runs(700) },
      );
      tc.diagnostic(`GET cases: ${n}; statuses ${JSON.stringify(Object.fromEntries(statuses))}`);
    });

    test(`integers at the storage edges in otherwise valid writes: 422 naming the field, never a 5xx (seed ${SEED})`, async (tc) => {
      let n = 0;
      // Every writable association (and association list) of every collection, and the item id itself.
      const targets = all
        .filter((c) => !c.readOnly)
        .flatMap((c) => [
          ...Object.entries(c.fields)
            .filter(([, f]) => !f.readOnly && (f.kind === 'assoc' || f.kind === 'assocList'))
            .map(([name, f]) => ({ c, name, list: f.kind === 'assocList' })),
          { c, name: 'id', list: false },
        ])
        .filter(({ c }) => ids.get(c.name)!.length > 0);
      const arb = fc.tuple(
        fc.constantFrom(...targets.map((_, i) => i)),
        edgeInteger,
        fc.constantFrom('PATCH', 'DELETE'),
      );
      await fc.assert(
        fc.asyncProperty(arb, async ([ti, edge, method]) => {
          const { c, name, list } = targets[ti];
          const value = BigInt(edge.text);
          const storable = value >= 1n && value <= 2n ** 31n - 1n;
          // In-range small ids may name real items: only the largest storable id is tried (it does not exist).
          if ((name !== 'id' && method === 'DELETE') || (storable && value !== 2n ** 31n - 1n)) return;
          n++;
          const own = ids.get(c.name)![0];
          const ref: J = obj([['id', edge]]);
          const item =
            name === 'id'
              ? obj([['id', edge]])
              : obj([
                  ['id', own],
                  [name, list ? [obj([['id', new Raw(String(own))]]), ref] : ref],
                ]);
          const payload = toJson(obj([[c.name, [item]]]));
          const before = await snapshot(a.accountId);
          const res = await t.app.inject({
            method,
            url: `/${c.name}`,
            headers: { authorization: `Bearer ${a.token}`, 'x-version': '1.0', 'content-type': 'application/json' },
            payload,
          });
          const body = assertEnvelope(res, c, `${method} /${c.name} ${payload}`);
          if (!storable) {
            assert.equal(res.statusCode, 422, `${payload} -> ${res.body}`);
            assert.ok(
              body.failures[0].errors.some((e: { field?: string }) => e.field === name),
              `${payload} -> ${res.body}`,
            );
          } else {
            assert.ok(
              res.statusCode === 200 || res.statusCode === 422 || res.statusCode === 403,
              `${payload} -> ${res.statusCode} ${res.body}`,
            );
          }
          if (res.statusCode !== 200) assert.equal(await snapshot(a.accountId), before);
        }),
        { seed: SEED, numRuns: runs(300) },
      );
      tc.diagnostic(`edge-integer writes: ${n}`);
    });

    test(`writes with hostile bodies to every collection: no 5xx, all or nothing, never another account (seed ${SEED})`, async (tc) => {
      let n = 0;
      const statuses = new Map<number, number>();
      const otherB = await snapshot(b.accountId);
      const arb = fc.constantFrom(...all).chain((c) =>
        fc.tuple(
          fc.constant(c.name),
          fc.constantFrom('POST', 'PATCH', 'DELETE'),
          bodyOf(
            c,
            ids.get(c.name)!,
            all.map((x) => x.name).filter((x) => x !== c.name),
          ),
          rarely(fc.constantFrom('text/plain', 'application/json; charset=utf-16', 'multipart/form-data'), 12),
        ),
      );
      await fc.assert(
        fc.asyncProperty(arb, async ([name, method, payload, contentType]) => {
          const c = registry.get(name)!;
          n++;
          const before = await snapshot(a.accountId);
          const opts: InjectOptions = {
            method,
            url: `/${c.name}`,
            headers: {
              authorization: `Bearer ${a.token}`,
              'x-version': '1.0',
              'content-type': contentType ?? 'application/json',
            },
            payload,
          };
          const res = await t.app.inject(opts);
          statuses.set(res.statusCode, (statuses.get(res.statusCode) ?? 0) + 1);
          assertEnvelope(res, c, `${method} /${c.name} ${payload.slice(0, 200)}`);
          if (res.statusCode !== 200)
            assert.equal(
              await snapshot(a.accountId),
              before,
              `a refused ${method} changed stored data: ${payload.slice(0, 300)}`,
            );
        }),
        { seed: SEED, numRuns: runs(500) },
      );
      assert.equal(await snapshot(b.accountId), otherB, "account A's writes changed account B");
      assert.equal((Object.prototype as Record<string, unknown>).polluted, undefined);
      assert.deepEqual(
        Object.getOwnPropertyNames(Object.prototype).sort(),
        Object.getOwnPropertyNames(Object.getPrototypeOf({})).sort(),
      );
      tc.diagnostic(`write cases: ${n}; statuses ${JSON.stringify(Object.fromEntries(statuses))}`);
    });
  });
}
