import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import {
  DIALECTS,
  call,
  createTenant,
  createTestApp,
  skipUnless,
  type Tenant,
  type TestApp,
} from '../../../test/helpers.js';
import { SEED, runs } from '../../../test/arbitraries.js';

/**
 * Property: a random sequence of writes, with random repeats of earlier (key, request) pairs mixed
 * in, leaves exactly the data the same sequence leaves without the repeats; every repeat gets the
 * first answer again, marked as replayed.
 */
type Command =
  | { kind: 'create'; names: string[] }
  | { kind: 'update'; ref: number; name: string }
  | { kind: 'delete'; ref: number }
  | { kind: 'repeat'; ref: number };

// '' is refused (422): failures are kept and replayed too.
const name = fc.constantFrom('Ada', 'Bob', 'Cy', 'Dee', '');
const command: fc.Arbitrary<Command> = fc.oneof(
  {
    arbitrary: fc.record({
      kind: fc.constant('create' as const),
      names: fc.array(name, { minLength: 1, maxLength: 3 }),
    }),
    weight: 3,
  },
  { arbitrary: fc.record({ kind: fc.constant('update' as const), ref: fc.nat(20), name }), weight: 2 },
  { arbitrary: fc.record({ kind: fc.constant('delete' as const), ref: fc.nat(20) }), weight: 1 },
  { arbitrary: fc.record({ kind: fc.constant('repeat' as const), ref: fc.nat(20) }), weight: 3 },
);

interface Sent {
  method: string;
  url: string;
  body: unknown;
  key: string;
  status: number;
  raw: string;
}

const MISSING = 2_000_000_000;

/** Runs the commands for one tenant; `keyed` sends keys and performs the repeats. */
async function play(t: TestApp, tenant: Tenant, commands: Command[], keyed: boolean): Promise<number[]> {
  const created: number[] = [];
  const sent: Sent[] = [];
  const statuses: number[] = [];
  const idOf = (ref: number) => (created.length ? created[ref % created.length] : MISSING);
  for (const [i, c] of commands.entries()) {
    if (c.kind === 'repeat') {
      if (!keyed || !sent.length) continue;
      const first = sent[c.ref % sent.length];
      const again = await call(t.app, tenant.token, first.method, first.url, first.body, {
        'idempotency-key': first.key,
      });
      assert.equal(again.status, first.status);
      assert.equal(again.headers['idempotency-replayed'], 'true');
      assert.equal(again.raw, first.raw);
      continue;
    }
    const [method, url, body] =
      c.kind === 'create'
        ? ['POST', '/clients', { clients: c.names.map((n) => ({ name: n })) }]
        : c.kind === 'update'
          ? ['PATCH', `/clients/${idOf(c.ref)}`, { clients: [{ name: c.name }] }]
          : ['DELETE', `/clients/${idOf(c.ref)}`, undefined];
    const key = `p-${i}`;
    const res = await call(t.app, tenant.token, method, url, body, keyed ? { 'idempotency-key': key } : {});
    assert.equal(res.headers['idempotency-replayed'], undefined);
    statuses.push(res.status);
    if (c.kind === 'create' && res.status === 200) created.push(...res.body.clients.map((x: { id: number }) => x.id));
    sent.push({ method, url, body, key, status: res.status, raw: res.raw });
  }
  return statuses;
}

async function data(t: TestApp, tenant: Tenant) {
  const res = await call(t.app, tenant.token, 'GET', '/clients?fields=name,deleted&recordsPerPage=1000&sort=id');
  return res.body.clients.map((c: { name: string; deleted: boolean }) => [c.name, c.deleted]);
}

for (const dialect of DIALECTS) {
  describe(`Idempotency-Key: repeats change nothing (property, ${dialect})`, { skip: skipUnless(dialect) }, () => {
    let t: TestApp;
    before(async () => (t = await createTestApp(dialect)));
    after(async () => t?.close());

    test(
      'a sequence with random repeats of earlier keyed requests leaves the data of the sequence without them',
      { timeout: 300_000 },
      async () => {
        await fc.assert(
          fc.asyncProperty(fc.array(command, { minLength: 1, maxLength: 14 }), async (commands) => {
            const [withRepeats, without] = [await createTenant(t, 'Keyed'), await createTenant(t, 'Plain')];
            const keyedStatuses = await play(t, withRepeats, commands, true);
            const plainStatuses = await play(t, without, commands, false);
            assert.deepEqual(keyedStatuses, plainStatuses);
            assert.deepEqual(await data(t, withRepeats), await data(t, without));
          }),
          { seed: SEED, numRuns: runs(8) },
        );
      },
    );
  });
}
