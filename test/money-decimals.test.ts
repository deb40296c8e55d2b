import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { VALIDATION } from '../src/errors.js';
import { registry } from '../src/collections/index.js';
import { suiteWithTenants, call, createTenant, DIALECTS, errorsOf, skipUnless } from './helpers.js';

const code = (kind: keyof typeof VALIDATION, field: string) => `${VALIDATION[kind].code}:${field}`;
/** 16.99 as a float sum leaves it: the noise a client's arithmetic adds. */
const NOISY = 16.990000000000002;
/** The currency's decimals, not the 4 the storage keeps. */
const USD = /: must have at most 2 decimals \(the account's currency\)$/;

/** The message of the one failure naming `field`. */
function messageOf(res: { body: any }, field: string): string {
  const errors = (res.body?.failures ?? []).flatMap(
    (f: { errors: { field?: string; message?: string }[] }) => f.errors,
  );
  const e = errors.find((x: { field?: string }) => x.field === field);
  assert.ok(e, `a failure naming ${field}: ${JSON.stringify(res.body)}`);
  return String(e.message);
}

test('the collections with writable money are those whose rules check the currency decimals', () => {
  // A new one must check its amounts against the account currency too (checkCurrencyDecimals):
  // its field check leaves the decimals to that (validate.ts), and rounds the column meanwhile.
  const writable = registry.list
    .filter((c) => Object.values(c.fields).some((f) => f.kind === 'scalar' && f.money && !f.readOnly))
    .map((c) => c.name)
    .sort();
  assert.deepEqual(writable, ['agreements', 'charges', 'payments', 'products']);
});

for (const dialect of DIALECTS) {
  describe(
    `money decimals are the currency's, float noise included (${dialect})`,
    { skip: skipUnless(dialect) },
    () => {
      const { t, a } = suiteWithTenants(dialect);
      const post = (col: string, items: unknown[]) => call(t.app, a.token, 'POST', `/${col}`, { [col]: items });

      test('a USD amount of 16.990000000000002 hears "at most 2 decimals (the account\'s currency)", nothing is written', async () => {
        const products = await post('products', [{ name: 'Noisy', kind: 'material', unitPrice: NOISY }]);
        assert.equal(products.status, 422, products.raw);
        assert.deepEqual(errorsOf(products), [code('invalid', 'unitPrice')]);
        assert.match(messageOf(products, 'unitPrice'), USD);
        const job = (await post('jobs', [{ title: 'J' }])).body.jobs[0].id;
        const charges = await post('charges', [
          { job: { id: job }, kind: 'material', description: 'x', quantity: 1, unitPrice: 1, unitCost: NOISY },
        ]);
        assert.equal(charges.status, 422, charges.raw);
        assert.match(messageOf(charges, 'unitCost'), USD);
        const client = (await post('clients', [{ name: 'C' }])).body.clients[0].id;
        const invoice = await post('invoices', [
          { client: { id: client }, lines: [{ description: 'A', quantity: 1, unitPrice: NOISY }] },
        ]);
        assert.equal(invoice.status, 422, invoice.raw);
        assert.match(messageOf(invoice, 'lines[0].unitPrice'), USD);
        const agreement = await post('agreements', [
          {
            client: { id: client },
            name: 'Boiler care',
            jobTitle: 'Service',
            startDate: '2030-01-07',
            recurrence: 'FREQ=YEARLY',
            price: NOISY,
            billing: 'yearly',
          },
        ]);
        assert.equal(agreement.status, 422, agreement.raw);
        assert.match(messageOf(agreement, 'price'), USD);
        const listed = await call(t.app, a.token, 'GET', '/products');
        assert.equal(listed.body.metadata.recordsCount, 0, 'nothing rounded was written');
        // The storage's own bounds still answer at the field: not a number, past 1e9.
        const bad = await post('products', [{ name: 'Big', kind: 'material', unitPrice: 1e10 }]);
        assert.match(messageOf(bad, 'unitPrice'), /at most 1,000,000,000 in magnitude/);
        // And the same amount without the noise is fine.
        const ok = await post('products', [{ name: 'Clean', kind: 'material', unitPrice: 16.99 }]);
        assert.equal(ok.status, 200, ok.raw);
        assert.equal(ok.body.products[0].unitPrice, 16.99);
      });

      test('a JPY account hears "at most 0 decimals" for 5.00001; a KWD one takes three but not four', async () => {
        for (const [currency, value, message] of [
          ['JPY', 5.00001, "must have at most 0 decimals (the account's currency)"],
          ['KWD', 1.0005, "must have at most 3 decimals (the account's currency)"],
        ] as const) {
          // Accounts of their own: an account's currency is read once and kept (accountMoney).
          const tenant = await createTenant(t, currency);
          await t.database.db.updateTable('accounts').set({ currency }).where('id', '=', tenant.accountId).execute();
          const res = await call(t.app, tenant.token, 'POST', '/products', {
            products: [{ name: currency, kind: 'material', unitPrice: value }],
          });
          assert.equal(res.status, 422, res.raw);
          assert.ok(messageOf(res, 'unitPrice').endsWith(message), messageOf(res, 'unitPrice'));
        }
      });
    },
  );
}
