import { before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  DIALECTS,
  addUser,
  assertIsolated,
  call,
  suiteWithTenants,
  createTenant,
  errorsOf,
  skipUnless,
} from '../../../test/helpers.js';
import { ERRORS, VALIDATION } from '../../errors.js';

const code = (kind: keyof typeof VALIDATION, field: string) => `${VALIDATION[kind].code}:${field}`;

for (const dialect of DIALECTS) {
  describe(`price book and charges (${dialect})`, { skip: skipUnless(dialect) }, () => {
    const { t, a, b } = suiteWithTenants(dialect);
    let jobA: number;
    let jobB: number;
    before(async () => {
      jobA = (await call(t.app, a.token, 'POST', '/jobs', { jobs: [{ title: 'A job' }] })).body.jobs[0].id;
      jobB = (await call(t.app, b.token, 'POST', '/jobs', { jobs: [{ title: 'B job' }] })).body.jobs[0].id;
    });

    const post = (col: string, items: unknown[], token = a.token) =>
      call(t.app, token, 'POST', `/${col}`, { [col]: items });
    const patch = (col: string, items: unknown[], token = a.token) =>
      call(t.app, token, 'PATCH', `/${col}`, { [col]: items });
    const count = async (table: 'charges' | 'products' | 'tax_rates') =>
      Number(
        (
          await t.database.db
            .selectFrom(table)
            .select((eb) => eb.fn.countAll().as('n'))
            .executeTakeFirstOrThrow()
        ).n,
      );

    it("the account's currency and time zone show among its members", async () => {
      const res = await call(t.app, a.token, 'GET', `/users/${a.adminId}?fields=account.currency,account.timeZone`);
      assert.equal(res.status, 200, res.raw);
      assert.deepEqual(res.body.users[0].account, { id: a.accountId, currency: 'USD', timeZone: 'UTC' });
      const all = await call(t.app, a.token, 'GET', `/users/${a.adminId}?fields=*,[*]`);
      assert.equal(all.body.users[0].account.currency, 'USD');
    });

    it('tax rates and products: exact values, at most the allowed decimals, roles', async () => {
      const rate = await post('taxRates', [{ name: 'NY', percent: 8.875 }]);
      assert.equal(rate.status, 200, rate.raw);
      assert.equal(rate.body.taxRates[0].percent, 8.875);
      const stored = await t.database.db
        .selectFrom('tax_rates')
        .select('percent')
        .where('id', '=', rate.body.taxRates[0].id)
        .executeTakeFirstOrThrow();
      assert.equal(Number(stored.percent), 88750); // an integer of 10^-4, never a float
      for (const [percent, field] of [
        [100.00001, 'percent'],
        [101, 'percent'],
        [-1, 'percent'],
        ['8', 'percent'],
      ] as const) {
        const r = await post('taxRates', [{ name: `bad ${percent}`, percent }]);
        assert.equal(r.status, 422, `${percent}`);
        assert.deepEqual(errorsOf(r), [code('invalid', field)]);
      }
      assert.deepEqual(errorsOf(await post('taxRates', [{ name: 'NY', percent: 1 }])), [code('unique', 'name')]);
      const prod = await post('products', [
        {
          name: 'Labour',
          code: 'LAB',
          kind: 'labour',
          unit: 'hour',
          unitPrice: 85.5,
          taxRate: { id: rate.body.taxRates[0].id },
        },
      ]);
      assert.equal(prod.status, 200, prod.raw);
      assert.deepEqual(
        { ...prod.body.products[0], id: 0, created: 0, modified: 0 },
        {
          id: 0,
          name: 'Labour',
          code: 'LAB',
          kind: 'labour',
          unit: 'hour',
          unitPrice: 85.5,
          unitCost: null,
          taxRate: { id: rate.body.taxRates[0].id },
          description: null,
          customFields: {},
          account: { id: a.accountId },
          created: 0,
          modified: 0,
          deleted: false,
        },
      );
      const before = await count('products');
      // Three decimals in a USD account; a value past 1e9; Infinity from 1e400; a rate of another account.
      // Past 1e9; Infinity (the text 1e400); a string: refused before the transaction.
      const bad = await call(
        t.app,
        a.token,
        'POST',
        '/products',
        '{"products":[{"name":"y","kind":"material","unitPrice":1000000000.01},{"name":"z","kind":"material","unitPrice":1e400},{"name":"s","kind":"material","unitPrice":"1.00"},{"name":"ok","kind":"material","unitPrice":1}]}',
      );
      assert.equal(bad.status, 422, bad.raw);
      assert.deepEqual(errorsOf(bad), [
        code('invalid', 'unitPrice'),
        code('invalid', 'unitPrice'),
        code('invalid', 'unitPrice'),
      ]);
      assert.match(bad.raw, /finite/);
      // Three decimals in a USD account; a tax rate of another account: refused in the transaction.
      const rateB = (await post('taxRates', [{ name: 'B rate', percent: 5 }], b.token)).body.taxRates[0].id;
      const bad2 = await post('products', [
        { name: 'x', kind: 'material', unitPrice: 1.005 },
        { name: 'ok', kind: 'material', unitPrice: 1 },
      ]);
      assert.deepEqual(errorsOf(bad2), [code('invalid', 'unitPrice')]);
      assert.match(bad2.raw, /at most 2 decimals/);
      const bad3 = await post('products', [{ name: 'w', kind: 'material', unitPrice: 1, taxRate: { id: rateB } }]);
      assert.deepEqual(errorsOf(bad3), [code('reference', 'taxRate')]);
      assert.equal(await count('products'), before);
      // Employees and Contractors read the price book but do not write it.
      const emp = await addUser(t, a, 'employee');
      const con = await addUser(t, a, 'contractor');
      for (const u of [emp, con]) {
        assert.equal((await call(t.app, u.token, 'GET', '/products')).status, 200);
        assert.equal((await call(t.app, u.token, 'GET', '/taxRates')).status, 200);
        assert.equal((await post('products', [{ name: 'n', kind: 'labour', unitPrice: 1 }], u.token)).status, 403);
        assert.equal((await post('taxRates', [{ name: 'n', percent: 1 }], u.token)).status, 403);
      }
      await assertIsolated(t, b, a, 'products', prod.body.products[0].id, { name: 'stolen' });
    });

    it('charges: product defaults, the two roundings, read-only amounts, filters in the API unit', async () => {
      const rate = (await post('taxRates', [{ name: 'Ten', percent: 10 }])).body.taxRates[0].id;
      const prod = (
        await post('products', [
          { name: 'Pipe', kind: 'material', unitPrice: 12.35, unitCost: 7.1, taxRate: { id: rate } },
        ])
      ).body.products[0].id;
      const res = await post('charges', [
        { job: { id: jobA }, product: { id: prod }, quantity: 1.5 },
        {
          job: { id: jobA },
          kind: 'expense',
          description: 'Discount',
          unitPrice: -0.05,
          quantity: 1,
          taxRate: { id: rate },
        },
      ]);
      assert.equal(res.status, 200, res.raw);
      const [c1, c2] = res.body.charges;
      assert.deepEqual(
        { ...c1, id: 0, created: 0, modified: 0 },
        {
          id: 0,
          job: { id: jobA },
          product: { id: prod },
          kind: 'material',
          description: 'Pipe',
          unitPrice: 12.35,
          unitCost: 7.1,
          taxRate: { id: rate },
          quantity: 1.5,
          taxPercent: 10,
          stage: 'actual',
          billable: true,
          user: { id: a.adminId },
          visit: null,
          subtotal: 18.53, // 18.525 → 18.53 (half away from zero)
          tax: 1.85, // 1.853 → 1.85
          total: 20.38,
          invoice: null,
          account: { id: a.accountId },
          created: 0,
          modified: 0,
          deleted: false,
        },
      );
      assert.deepEqual([c2.subtotal, c2.tax, c2.total], [-0.05, -0.01, -0.06]); // -0.005 → -0.01
      // Changing the quantity recomputes; the rate's percent is taken again.
      const up = await patch('charges', [{ id: c1.id, quantity: 3 }]);
      assert.equal(up.status, 200, up.raw);
      assert.deepEqual(
        [up.body.charges[0].subtotal, up.body.charges[0].tax, up.body.charges[0].total],
        [37.05, 3.71, 40.76],
      );
      // Amounts are read-only; quantity > 0, at most 3 decimals; a price with the currency's decimals.
      const before = await count('charges');
      const bad = await post('charges', [
        { job: { id: jobA }, product: { id: prod }, quantity: 1, subtotal: 5 },
        { job: { id: jobA }, product: { id: prod }, quantity: 0 },
        { job: { id: jobA }, product: { id: prod }, quantity: 1.0001 },
      ]);
      assert.equal(bad.status, 422, bad.raw);
      assert.deepEqual(errorsOf(bad), [
        code('readOnly', 'subtotal'),
        code('invalid', 'quantity'),
        code('invalid', 'quantity'),
      ]);
      const bad2 = await post('charges', [
        { job: { id: jobA }, product: { id: prod }, quantity: 1, unitPrice: 0.001 },
        { job: { id: jobA }, quantity: 1 },
        { job: { id: jobA }, product: { id: prod }, quantity: 1000000, unitPrice: 1000.01 },
      ]);
      assert.equal(bad2.status, 422, bad2.raw);
      assert.deepEqual(errorsOf(bad2), [
        code('invalid', 'unitPrice'),
        code('required', 'kind'),
        code('required', 'description'),
        code('required', 'unitPrice'),
        code('invalid', 'quantity'),
      ]);
      assert.deepEqual(errorsOf(await post('charges', [{ job: { id: jobB }, product: { id: prod }, quantity: 1 }])), [
        code('reference', 'job'),
      ]);
      assert.equal(await count('charges'), before);
      // where compares in the API's unit, exactly.
      const found = await call(t.app, a.token, 'GET', `/charges?where=${encodeURIComponent('subtotal = 37.05')}`);
      assert.deepEqual(
        found.body.charges.map((c: { id: number }) => c.id),
        [c1.id],
      );
      const sorted = await call(
        t.app,
        a.token,
        'GET',
        `/charges?where=${encodeURIComponent(`job.id = ${jobA}`)}&sort=-total`,
      );
      assert.deepEqual(
        sorted.body.charges.map((c: { id: number }) => c.id),
        [c1.id, c2.id],
      );
      assert.equal(
        (await call(t.app, a.token, 'GET', `/charges?where=${encodeURIComponent('total > 0.00001')}`)).status,
        400,
      );
    });

    it('a visit of another job is refused; a Contractor reads the charges of their jobs and writes only their actual ones', async () => {
      const con = await addUser(t, a, 'contractor');
      const other = (await call(t.app, a.token, 'POST', '/jobs', { jobs: [{ title: 'Other' }] })).body.jobs[0].id;
      const visit = await post('visits', [
        {
          job: { id: jobA },
          user: { id: con.id },
          label: 'V',
          startTime: '2030-01-01T09:00:00Z',
          endTime: '2030-01-01T10:00:00Z',
        },
      ]);
      const visitId = visit.body.visits[0].id;
      const line = { kind: 'labour', description: 'Work', unitPrice: 50, quantity: 2 };
      assert.deepEqual(errorsOf(await post('charges', [{ job: { id: other }, visit: { id: visitId }, ...line }])), [
        code('invalid', 'visit'),
      ]);
      const onA = (await post('charges', [{ job: { id: jobA }, visit: { id: visitId }, ...line }])).body.charges[0].id;
      const onOther = (await post('charges', [{ job: { id: other }, ...line }])).body.charges[0].id;
      const seen = await call(t.app, con.token, 'GET', '/charges?recordsPerPage=1000');
      const ids = seen.body.charges.map((c: { id: number }) => c.id);
      assert.ok(ids.includes(onA));
      assert.ok(!ids.includes(onOther));
      assert.equal((await call(t.app, con.token, 'GET', `/charges/${onOther}`)).status, 404);
      // Their own actual charge on their job: yes (the user defaults to them).
      const mine = await post('charges', [{ job: { id: jobA }, ...line }], con.token);
      assert.equal(mine.status, 200, mine.raw);
      assert.equal(mine.body.charges[0].user.id, con.id);
      // Quoted, someone else's, another job: no.
      assert.equal((await post('charges', [{ job: { id: jobA }, stage: 'quoted', ...line }], con.token)).status, 403);
      assert.equal(
        (await post('charges', [{ job: { id: jobA }, user: { id: a.adminId }, ...line }], con.token)).status,
        403,
      );
      assert.deepEqual(errorsOf(await post('charges', [{ job: { id: other }, ...line }], con.token)), [
        code('reference', 'job'),
      ]);
      // They change only their own charges.
      assert.equal((await patch('charges', [{ id: onA, quantity: 1 }], con.token)).status, 403);
      assert.equal((await patch('charges', [{ id: mine.body.charges[0].id, quantity: 1 }], con.token)).status, 200);
    });

    it('amounts follow the currency: JPY takes no decimals, KWD three, in writes and in where', async () => {
      for (const [currency, ok, tooMany, expect] of [
        ['JPY', 1500, 1500.5, { subtotal: 2250, tax: 0, total: 2250 }],
        ['KWD', 1.125, 1.1255, { subtotal: 1.688, tax: 0, total: 1.688 }],
        ['USD', 10.25, 10.255, { subtotal: 15.38, tax: 0, total: 15.38 }],
      ] as const) {
        const tenant = await createTenant(t, currency);
        // createTenant makes a USD account (accounts create --currency is test/money-cli.test.ts).
        await t.database.db.updateTable('accounts').set({ currency }).where('id', '=', tenant.accountId).execute();
        const job = (await call(t.app, tenant.token, 'POST', '/jobs', { jobs: [{ title: 'J' }] })).body.jobs[0].id;
        const line = { job: { id: job }, kind: 'labour', description: 'Work', quantity: 1.5 };
        const good = await post('charges', [{ ...line, unitPrice: ok }], tenant.token);
        assert.equal(good.status, 200, good.raw);
        const c = good.body.charges[0];
        assert.deepEqual({ subtotal: c.subtotal, tax: c.tax, total: c.total }, expect);
        assert.deepEqual(errorsOf(await post('charges', [{ ...line, unitPrice: tooMany }], tenant.token)), [
          code('invalid', 'unitPrice'),
        ]);
        // A where literal is held to the same decimals, never rounded: a 400 naming the member,
        // on the collection's own money members and on an association's (`invoice.total`).
        const where = (w: string) => call(t.app, tenant.token, 'GET', `/charges?where=${encodeURIComponent(w)}`);
        const found = await where(`unitPrice = ${ok} and total >= ${expect.total}`);
        assert.deepEqual(
          found.body.charges?.map((x: { id: number }) => x.id),
          [c.id],
          found.raw,
        );
        for (const w of [`unitPrice = ${tooMany}`, `total > ${tooMany}`, `invoice.total < ${tooMany}`]) {
          const refused = await where(w);
          assert.equal(refused.status, 400, `${currency} ${w}: ${refused.raw}`);
          assert.equal(refused.body.error.code, ERRORS.badModifier.code);
          const member = w.split(' ')[0];
          assert.match(
            refused.body.error.message,
            new RegExp(`'${member}' must have at most \\d decimals? \\(the account's currency\\)`),
          );
        }
      }
    });
  });
}
