import { before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { DIALECTS, addUser, call, suiteWithTenants, errorsOf, skipUnless } from '../../../test/helpers.js';
import { ERRORS, VALIDATION } from '../../errors.js';

const code = (kind: keyof typeof VALIDATION, field: string) => `${VALIDATION[kind].code}:${field}`;
const STATE = ERRORS.stateForbids.code;

for (const dialect of DIALECTS) {
  describe(`invoices and payments (${dialect})`, { skip: skipUnless(dialect) }, () => {
    const { t, a, b } = suiteWithTenants(dialect);
    let client: number;
    before(async () => {
      client = (await call(t.app, a.token, 'POST', '/clients', { clients: [{ name: 'Customer' }] })).body.clients[0].id;
    });

    const post = (col: string, items: unknown[], token = a.token) =>
      call(t.app, token, 'POST', `/${col}`, { [col]: items });
    const patch = (col: string, items: unknown[], token = a.token) =>
      call(t.app, token, 'PATCH', `/${col}`, { [col]: items });
    const action = (id: number, name: string, token = a.token) => call(t.app, token, 'POST', `/invoices/${id}/${name}`);
    const get = async (col: string, id: number) =>
      (await call(t.app, a.token, 'GET', `/${col}/${id}?fields=*`)).body[col][0];
    const newJob = async () =>
      (await post('jobs', [{ title: 'Job', client: { id: client } }])).body.jobs[0].id as number;
    const charge = (job: number, extra: Record<string, unknown> = {}) => ({
      job: { id: job },
      kind: 'labour',
      description: 'Work',
      unitPrice: 10.05,
      quantity: 1.5,
      ...extra,
    });
    const lastEvent = async () =>
      (await call(t.app, a.token, 'GET', '/events?sort=-id&recordsPerPage=1')).body.events[0]?.id ?? 0;
    const eventsAfter = async (id: number) =>
      (await call(t.app, a.token, 'GET', `/events?where=${encodeURIComponent(`id > ${id}`)}&recordsPerPage=1000`)).body
        .events as { type: string; item: { id: number }; changes: Record<string, unknown> | null }[];

    it('an invoice made from a job bills exactly its un-billed billable actual charges, and they freeze', async () => {
      const job = await newJob();
      const made = await post('charges', [
        charge(job),
        charge(job, { stage: 'quoted' }),
        charge(job, { billable: false }),
        charge(job, { unitPrice: -1, description: 'Discount' }),
        charge(job, { deleted: true }),
        charge(job, { quantity: 2, unitPrice: 3.33 }),
      ]);
      assert.equal(made.status, 200, made.raw);
      const ids = made.body.charges.map((c: { id: number }) => c.id);
      const seen = await lastEvent();
      const inv = await post('invoices', [{ job: { id: job } }]);
      assert.equal(inv.status, 200, inv.raw);
      const i = inv.body.invoices[0];
      assert.deepEqual(
        i.lines.map((l: { charge: { id: number } }) => l.charge.id),
        [ids[0], ids[3], ids[5]],
      );
      assert.deepEqual(i.lines[0], {
        description: 'Work',
        quantity: 1.5,
        unitPrice: 10.05,
        taxRate: null,
        product: null,
        kind: 'labour',
        taxPercent: null,
        subtotal: 15.08, // 15.075 → 15.08
        tax: 0,
        total: 15.08,
        charge: { id: ids[0] },
      });
      assert.deepEqual(
        [i.subtotal, i.taxTotal, i.total, i.amountPaid, i.balance, i.state, i.number, i.currency, i.client.id],
        [20.24, 0, 20.24, 0, 20.24, 'draft', null, 'USD', client],
      );
      for (const [k, id] of ids.entries())
        assert.deepEqual((await get('charges', id)).invoice, [0, 3, 5].includes(k) ? { id: i.id } : null);
      // Each billed charge is an event of the same transaction.
      const events = await eventsAfter(seen);
      const billed = events.filter((e) => e.type === 'charges.updated').map((e) => e.item.id);
      assert.deepEqual(billed.sort(), [ids[0], ids[3], ids[5]].sort());
      assert.ok(events.some((e) => e.type === 'invoices.created' && e.item.id === i.id));
      // Frozen: no change, no delete, while the invoice is not void.
      assert.deepEqual(errorsOf(await patch('charges', [{ id: ids[0], quantity: 5 }])), [code('conflict', 'invoice')]);
      assert.deepEqual(errorsOf(await call(t.app, a.token, 'DELETE', `/charges/${ids[0]}`)), [
        code('conflict', 'invoice'),
      ]);
      // A second invoice from the job finds nothing left to bill.
      const second = await post('invoices', [{ job: { id: job } }]);
      assert.deepEqual(second.body.invoices[0].lines, []);
      // Deleting the draft releases its charges (events too); setting lines does as well.
      const before = await lastEvent();
      const del = await call(t.app, a.token, 'DELETE', `/invoices/${i.id}`);
      assert.equal(del.status, 200, del.raw);
      assert.equal((await get('charges', ids[0])).invoice, null);
      const released = (await eventsAfter(before)).filter((e) => e.type === 'charges.updated');
      assert.equal(released.length, 3);
      const again = (await post('invoices', [{ job: { id: job } }])).body.invoices[0];
      assert.equal(again.lines.length, 3);
      const replaced = await patch('invoices', [
        { id: again.id, lines: [{ description: 'Flat fee', quantity: 1, unitPrice: 100 }] },
      ]);
      assert.equal(replaced.status, 200, replaced.raw);
      assert.equal(replaced.body.invoices[0].total, 100);
      assert.equal((await get('charges', ids[0])).invoice, null);
    });

    it('two invoices made at once from one job never bill a charge twice', async () => {
      const job = await newJob();
      const ids = (
        await post(
          'charges',
          Array.from({ length: 5 }, () => charge(job)),
        )
      ).body.charges.map((c: { id: number }) => c.id);
      const made = await Promise.all(Array.from({ length: 4 }, () => post('invoices', [{ job: { id: job } }])));
      assert.ok(made.every((r) => r.status === 200));
      const billed = made.flatMap((r) => r.body.invoices[0].lines.map((l: { charge: { id: number } }) => l.charge.id));
      assert.deepEqual(
        billed.sort((x: number, y: number) => x - y),
        ids,
      );
    });

    it('lines: exact amounts, refusals naming lines[i].member, at most 200, nothing saved', async () => {
      const rate = (await post('taxRates', [{ name: 'VAT', percent: 20 }])).body.taxRates[0].id;
      const rateB = (await post('taxRates', [{ name: 'VAT B', percent: 20 }], b.token)).body.taxRates[0].id;
      const ok = await post('invoices', [
        {
          client: { id: client },
          lines: [
            { description: 'A', quantity: 3, unitPrice: 0.35, taxRate: { id: rate } },
            { description: 'Discount', quantity: 1, unitPrice: -0.05, taxRate: { id: rate } },
          ],
        },
      ]);
      assert.equal(ok.status, 200, ok.raw);
      const inv = ok.body.invoices[0];
      assert.deepEqual(
        inv.lines.map((l: { subtotal: number; tax: number; total: number; taxPercent: number }) => [
          l.subtotal,
          l.tax,
          l.total,
          l.taxPercent,
        ]),
        [
          [1.05, 0.21, 1.26, 20],
          [-0.05, -0.01, -0.06, 20],
        ],
      );
      assert.deepEqual([inv.subtotal, inv.taxTotal, inv.total], [1, 0.2, 1.2]);
      const count = async () => (await call(t.app, a.token, 'GET', '/invoices')).body.metadata.recordsCount;
      const n = await count();
      const line = { description: 'x', quantity: 1, unitPrice: 1 };
      const bad = await post('invoices', [
        {
          client: { id: client },
          lines: [
            { ...line, quantity: 0 },
            { ...line, quantity: 1.0001 },
            { ...line, unitPrice: Infinity },
            { ...line, subtotal: 1 },
            { description: 'y' },
          ],
        },
        { client: { id: client }, lines: Array.from({ length: 201 }, () => line) },
      ]);
      assert.equal(bad.status, 422, bad.raw);
      assert.deepEqual(errorsOf(bad), [
        code('invalid', 'lines[0].quantity'),
        code('invalid', 'lines[1].quantity'),
        code('invalid', 'lines[2].unitPrice'),
        code('readOnly', 'lines[3].subtotal'),
        code('required', 'lines[4].quantity'),
        code('required', 'lines[4].unitPrice'),
        code('invalid', 'lines'),
      ]);
      const bad2 = await post('invoices', [
        {
          client: { id: client },
          lines: [
            { ...line, unitPrice: 0.001 },
            { ...line, taxRate: { id: rateB } },
            { ...line, quantity: 1000.5, unitPrice: 1000000 },
          ],
        },
      ]);
      assert.deepEqual(errorsOf(bad2), [
        code('invalid', 'lines[0].unitPrice'),
        code('reference', 'lines[1].taxRate'),
        code('invalid', 'lines[2].quantity'),
      ]);
      const bad3 = await post('invoices', [
        {
          client: { id: client },
          lines: [
            { ...line, quantity: 1, unitPrice: 600000000 },
            { ...line, quantity: 1, unitPrice: 600000000 },
          ],
        },
      ]);
      assert.deepEqual(errorsOf(bad3), [code('invalid', 'lines')]);
      assert.equal(await count(), n);
      // A client is needed when the job has none.
      assert.deepEqual(errorsOf(await post('invoices', [{ lines: [line] }])), [code('required', 'client')]);
    });

    it('issue numbers gaplessly, dates in the account zone; states refuse with 1280 and change nothing', async () => {
      const empty = (await post('invoices', [{ client: { id: client } }])).body.invoices[0].id;
      const refused = await action(empty, 'issue');
      assert.equal(refused.status, 422, refused.raw);
      assert.equal(refused.body.error.code, STATE);
      const negative = (
        await post('invoices', [
          { client: { id: client }, lines: [{ description: 'Refund', quantity: 1, unitPrice: -5 }] },
        ])
      ).body.invoices[0].id;
      assert.equal((await action(negative, 'issue')).body.error.code, STATE);
      const id = (
        await post('invoices', [
          { client: { id: client }, lines: [{ description: 'Job', quantity: 1, unitPrice: 50 }] },
        ])
      ).body.invoices[0].id;
      const issued = await action(id, 'issue');
      assert.equal(issued.status, 200, issued.raw);
      const inv = issued.body.invoices[0];
      const today = new Date(t.clock.now).toISOString().slice(0, 10);
      const due = new Date(Date.parse(`${today}T00:00:00Z`) + 30 * 86_400_000).toISOString().slice(0, 10);
      assert.deepEqual([inv.number, inv.state, inv.issueDate, inv.dueDate], ['INV-000001', 'issued', today, due]);
      assert.equal((await action(id, 'issue')).body.error.code, STATE);
      assert.equal((await action(empty, 'void')).body.error.code, STATE);
      assert.deepEqual(errorsOf(await patch('invoices', [{ id, lines: [] }])), [code('conflict', 'lines')]);
      assert.deepEqual(errorsOf(await patch('invoices', [{ id, deleted: true }])), [code('conflict', 'deleted')]);
      assert.equal((await patch('invoices', [{ id, notes: 'Thanks' }])).status, 200);
      assert.deepEqual(errorsOf(await call(t.app, a.token, 'DELETE', `/invoices/${id}`)), [code('conflict', 'state')]);
      // A zero total is paid at once.
      const zero = (
        await post('invoices', [
          { client: { id: client }, lines: [{ description: 'Free', quantity: 1, unitPrice: 0 }] },
        ])
      ).body.invoices[0].id;
      const z = (await action(zero, 'issue')).body.invoices[0];
      assert.deepEqual([z.number, z.state], ['INV-000002', 'paid']);
    });

    it('concurrent issues never share or skip a number; failed ones use none', async () => {
      const line = [{ description: 'Job', quantity: 1, unitPrice: 1 }];
      const drafts = (
        await post(
          'invoices',
          Array.from({ length: 24 }, (_, k) => ({ client: { id: client }, lines: k % 4 === 3 ? [] : line })),
        )
      ).body.invoices.map((i: { id: number }) => i.id);
      const before = await call(
        t.app,
        a.token,
        'GET',
        `/invoices?where=${encodeURIComponent('number != null')}&recordsPerPage=1000`,
      );
      const had = before.body.invoices.length;
      const answers = await Promise.all(drafts.flatMap((id: number) => [action(id, 'issue'), action(id, 'issue')]));
      const ok = answers.filter((r) => r.status === 200);
      assert.equal(ok.length, 18); // each good draft once; the empty ones never
      assert.ok(answers.filter((r) => r.status !== 200).every((r) => r.status === 422 && r.body.error.code === STATE));
      const numbers = ok.map((r) => r.body.invoices[0].number as string).sort();
      assert.deepEqual(
        numbers,
        Array.from({ length: 18 }, (_, k) => `INV-${String(had + k + 1).padStart(6, '0')}`),
      );
    });

    it('payments: the balance, paid state, a race of two full payments, deletion gives back, void', async () => {
      const job = await newJob();
      const c = (await post('charges', [charge(job, { unitPrice: 40, quantity: 1 })])).body.charges[0].id;
      const id = (await post('invoices', [{ job: { id: job } }])).body.invoices[0].id;
      // Not issued yet: no payment.
      assert.deepEqual(errorsOf(await post('payments', [{ invoice: { id }, amount: 1 }])), [
        code('invalid', 'invoice'),
      ]);
      await action(id, 'issue');
      assert.deepEqual(errorsOf(await post('payments', [{ invoice: { id }, amount: 40.01 }])), [
        code('invalid', 'amount'),
      ]);
      assert.deepEqual(errorsOf(await post('payments', [{ invoice: { id }, amount: 0.001 }])), [
        code('invalid', 'amount'),
      ]);
      assert.deepEqual(errorsOf(await post('payments', [{ invoice: { id }, amount: 0 }])), [code('invalid', 'amount')]);
      const part = await post('payments', [{ invoice: { id }, amount: 15.5, method: 'cash' }]);
      assert.equal(part.status, 200, part.raw);
      let inv = await get('invoices', id);
      assert.deepEqual([inv.amountPaid, inv.balance, inv.state], [15.5, 24.5, 'issued']);
      // Two payments of the whole balance at once: one succeeds, the other fails.
      const race = await Promise.all([
        post('payments', [{ invoice: { id }, amount: 24.5 }]),
        post('payments', [{ invoice: { id }, amount: 24.5 }]),
      ]);
      assert.deepEqual(race.map((r) => r.status).sort(), [200, 422]);
      assert.deepEqual(errorsOf(race.find((r) => r.status === 422)!), [code('invalid', 'amount')]);
      inv = await get('invoices', id);
      assert.deepEqual([inv.amountPaid, inv.balance, inv.state], [40, 0, 'paid']);
      const full = race.find((r) => r.status === 200)!.body.payments[0].id;
      // Only reference changes; Employees do not delete; Contractors see nothing of it.
      assert.deepEqual(errorsOf(await patch('payments', [{ id: full, amount: 1 }])), [code('conflict', 'amount')]);
      assert.equal((await patch('payments', [{ id: full, reference: 'R-1' }])).status, 200);
      const emp = await addUser(t, a, 'employee');
      const con = await addUser(t, a, 'contractor');
      assert.equal((await call(t.app, emp.token, 'DELETE', `/payments/${full}`)).status, 403);
      for (const col of ['invoices', 'payments'])
        assert.equal((await call(t.app, con.token, 'GET', `/${col}`)).status, 403);
      assert.equal((await action(id, 'void', con.token)).status, 403);
      // Voiding needs no payments.
      assert.equal((await action(id, 'void')).body.error.code, STATE);
      assert.equal((await call(t.app, a.token, 'DELETE', `/payments/${full}`)).status, 200);
      inv = await get('invoices', id);
      assert.deepEqual([inv.amountPaid, inv.balance, inv.state], [15.5, 24.5, 'issued']);
      await call(t.app, a.token, 'DELETE', `/payments/${part.body.payments[0].id}`);
      const voided = await action(id, 'void');
      assert.equal(voided.status, 200, voided.raw);
      assert.equal(voided.body.invoices[0].state, 'void');
      assert.match(voided.body.invoices[0].number, /^INV-\d{6}$/);
      // The charge is released and may be billed again.
      assert.equal((await get('charges', c)).invoice, null);
      assert.equal((await post('invoices', [{ job: { id: job } }])).body.invoices[0].lines.length, 1);
      // Another account's invoice is not found.
      assert.deepEqual(errorsOf(await post('payments', [{ invoice: { id }, amount: 1 }], b.token)), [
        code('reference', 'invoice'),
      ]);
    });

    it('pdf: the document as a files item attached to the job, with its number, client, lines and totals', async () => {
      const cl = (
        await post('clients', [
          { name: 'Ms Jane Customer', address: { line1: '12 High Street', city: 'Springfield', postcode: 'SP1 2AB' } },
        ])
      ).body.clients[0].id;
      const job = (await post('jobs', [{ title: 'Boiler', client: { id: cl } }])).body.jobs[0].id;
      const rate = (await post('taxRates', [{ name: 'Sales 8.875', percent: 8.875 }])).body.taxRates[0].id;
      await post('charges', [
        charge(job, { description: 'Boiler service labour', unitPrice: 85.25, quantity: 1.5, taxRate: { id: rate } }),
        charge(job, { kind: 'material', description: 'Pressure valve', unitPrice: 1234.5, quantity: 2 }),
        charge(job, { kind: 'expense', description: 'Loyalty discount', unitPrice: -10, quantity: 1 }),
      ]);
      const id = (await post('invoices', [{ job: { id: job }, notes: 'Thank you for your business.' }])).body
        .invoices[0].id;
      const text = async (res: Awaited<ReturnType<typeof action>>, keep?: string) => {
        assert.equal(res.status, 200, res.raw);
        const file = res.body.files[0];
        assert.equal(file.mimeType, 'application/pdf');
        assert.deepEqual(file.job, { id: job });
        const url = new URL(file.downloadUrl);
        const dl = await t.app.inject({ method: 'GET', url: url.pathname + url.search });
        assert.equal(dl.statusCode, 200);
        assert.match(String(dl.headers['content-type']), /^application\/pdf/);
        const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'fsm-pdf-'));
        const pdfPath = path.join(dir, 'doc.pdf');
        fs.writeFileSync(pdfPath, dl.rawPayload);
        if (keep) fs.copyFileSync(pdfPath, keep);
        const out = execFileSync('pdftotext', ['-layout', pdfPath, '-'], { encoding: 'utf8' });
        fs.rmSync(dir, { recursive: true, force: true });
        return out;
      };
      const draft = await text(await action(id, 'pdf'));
      assert.match(draft, /DRAFT/);
      for (const s of [
        'Ms Jane Customer',
        '12 High Street',
        'Boiler service labour',
        'Pressure valve',
        'Loyalty discount',
        '2,469.00', // 2 × 1,234.50
        '127.88', // 1.5 × 85.25 = 127.875
        '-10.00',
        '2,586.88 USD', // subtotal
        '11.35 USD', // 127.88 × 8.875 % = 11.349…
        '2,598.23 USD', // total
      ])
        assert.ok(draft.includes(s), `${s} in:\n${draft}`);
      await action(id, 'issue');
      const issued = await text(await action(id, 'pdf'), process.env.FSM_PDF_KEEP);
      const number = (await get('invoices', id)).number;
      assert.ok(issued.includes(number), issued);
      assert.doesNotMatch(issued, /DRAFT/);
      assert.match(issued, /Due date: \d{4}-\d{2}-\d{2}/);
      assert.match(issued, /Balance due\s+2,598\.23 USD/);
      // Contractors have no access; another account's invoice is not found.
      const con = await addUser(t, a, 'contractor');
      assert.equal((await action(id, 'pdf', con.token)).status, 403);
      assert.equal((await action(id, 'pdf', b.token)).status, 404);
    });
  });
}
