import { before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { DIALECTS, addUser, suiteWithTenants, call, errorsOf, skipUnless } from './helpers.js';
import { VALIDATION } from '../src/errors.js';

/**
 * Issue 43: the items of one request see each other's effects (a batch is its items one after
 * another in one transaction), documents keep what is numbered, and crew time and billing take
 * their locks in one order (no deadlock answers 500 on PostgreSQL).
 */
const code = (kind: keyof typeof VALIDATION, field: string) => `${VALIDATION[kind].code}:${field}`;

for (const dialect of DIALECTS) {
  describe(`batch effects, documents and lock order (${dialect})`, { skip: skipUnless(dialect) }, () => {
    const { t, a } = suiteWithTenants(dialect);
    let client: number;
    before(async () => {
      client = (await post('clients', [{ name: 'Customer' }])).body.clients[0].id;
    });

    const post = (col: string, items: unknown[], token = a.token) =>
      call(t.app, token, 'POST', `/${col}`, { [col]: items });
    const patch = (col: string, items: unknown[], token = a.token) =>
      call(t.app, token, 'PATCH', `/${col}`, { [col]: items });
    const act = (col: string, id: number, name: string, token = a.token) =>
      call(t.app, token, 'POST', `/${col}/${id}/${name}`);
    const get = async (col: string, id: number) =>
      (await call(t.app, a.token, 'GET', `/${col}/${id}?fields=*`)).body[col][0];
    const list = async (col: string, where: string) =>
      (await call(t.app, a.token, 'GET', `/${col}?fields=*&recordsPerPage=1000&where=${encodeURIComponent(where)}`))
        .body[col];
    const newJob = async () =>
      (await post('jobs', [{ title: 'Job', client: { id: client } }])).body.jobs[0].id as number;
    const charges = async (job: number, n: number, extra: Record<string, unknown> = {}) => {
      const ids: number[] = [];
      for (let i = 0; i < n; i += 100) {
        const items = Array.from({ length: Math.min(100, n - i) }, () => ({
          job: { id: job },
          kind: 'labour',
          description: 'Work',
          unitPrice: 10,
          quantity: 1,
          ...extra,
        }));
        const res = await post('charges', items);
        assert.equal(res.status, 200, res.raw);
        ids.push(...res.body.charges.map((c: { id: number }) => c.id));
      }
      return ids;
    };
    /** An issued invoice of `amount`, billed from a job of its own. */
    const issued = async (amount: number) => {
      const job = await newJob();
      await charges(job, 1, { unitPrice: amount });
      const id = (await post('invoices', [{ job: { id: job } }])).body.invoices[0].id as number;
      assert.equal((await act('invoices', id, 'issue')).status, 200);
      return { id, job };
    };

    // Point 1.
    it('one POST /payments with several items never overpays: each item sees the balance the earlier left', async () => {
      const { id } = await issued(100);
      const two = await post('payments', [
        { invoice: { id }, amount: 60 },
        { invoice: { id }, amount: 60 },
      ]);
      assert.equal(two.status, 422, two.raw);
      assert.deepEqual(two.body.metadata.invalidItems, [1]);
      assert.deepEqual(errorsOf(two), [code('invalid', 'amount')]);
      const five = await post(
        'payments',
        Array.from({ length: 5 }, () => ({ invoice: { id }, amount: 100 })),
      );
      assert.equal(five.status, 422, five.raw);
      assert.deepEqual(five.body.metadata.invalidItems, [1, 2, 3, 4]);
      let inv = await get('invoices', id);
      assert.deepEqual([inv.amountPaid, inv.balance, inv.state], [0, 100, 'issued']);
      assert.equal((await list('payments', `invoice.id = ${id}`)).length, 0, 'nothing of a failed batch is written');
      // A batch that fits pays exactly: the invoice is paid, and can neither be paid more nor voided.
      const fits = await post('payments', [
        { invoice: { id }, amount: 60 },
        { invoice: { id }, amount: 40 },
      ]);
      assert.equal(fits.status, 200, fits.raw);
      inv = await get('invoices', id);
      assert.deepEqual([inv.amountPaid, inv.balance, inv.state], [100, 0, 'paid']);
      assert.deepEqual(errorsOf(await post('payments', [{ invoice: { id }, amount: 0.01 }])), [
        code('invalid', 'amount'),
      ]);
    });

    // Point 2.
    it('two invoices from one job in one request never bill the same charge twice', async () => {
      const job = await newJob();
      const made = await charges(job, 3);
      const res = await post('invoices', [{ job: { id: job } }, { job: { id: job } }]);
      assert.equal(res.status, 200, res.raw);
      const [first, second] = res.body.invoices;
      assert.deepEqual(
        first.lines.map((l: { charge: { id: number } }) => l.charge.id),
        made,
      );
      assert.deepEqual(second.lines, [], 'the second sees the charges the first billed');
      for (const c of made) assert.equal((await get('charges', c)).invoice.id, first.id);
      // Deleting the second (a draft) releases nothing the first bills; a third bills nothing either.
      assert.equal((await call(t.app, a.token, 'DELETE', `/invoices/${second.id}`)).status, 200);
      for (const c of made) assert.equal((await get('charges', c)).invoice.id, first.id);
      assert.deepEqual((await post('invoices', [{ job: { id: job } }])).body.invoices[0].lines, []);
      // New lines release the charges the first billed; a batch of two invoices then bills them once.
      const replaced = await patch('invoices', [
        { id: first.id, lines: [{ description: 'Flat', quantity: 1, unitPrice: 5 }] },
      ]);
      assert.equal(replaced.status, 200, replaced.raw);
      const again = await post('invoices', [{ job: { id: job } }, { job: { id: job } }]);
      assert.equal(again.body.invoices[0].lines.length, 3);
      assert.equal(again.body.invoices[1].lines.length, 0);
    });

    it('the class: statuses, timesheets, contacts and unique custom values see the batch before them', async () => {
      // A new default, then the old default deleted, in one batch: the old one is no longer the default.
      const old = (await call(t.app, a.token, 'GET', '/statuses?fields=*&recordsPerPage=100')).body.statuses.find(
        (s: { isDefault: boolean }) => s.isDefault,
      );
      const made = (await post('statuses', [{ label: 'Fresh', group: 'new' }])).body.statuses[0].id;
      const swap = await patch('statuses', [
        { id: made, isDefault: true },
        { id: old.id, deleted: true },
      ]);
      assert.equal(swap.status, 200, swap.raw);
      assert.equal((await get('statuses', made)).isDefault, true);
      assert.deepEqual(
        [(await get('statuses', old.id)).isDefault, (await get('statuses', old.id)).deleted],
        [false, true],
      );
      // Two entries of one user overlapping each other in one batch.
      const overlap = await post('timesheets', [
        { startTime: '2031-01-01T09:00:00Z', endTime: '2031-01-01T10:00:00Z' },
        { startTime: '2031-01-01T09:30:00Z', endTime: '2031-01-01T11:00:00Z' },
      ]);
      assert.equal(overlap.status, 422, overlap.raw);
      assert.ok(errorsOf(overlap).includes(code('invalid', 'startTime')));
      // Two primary contacts of one client.
      const primaries = await post('contacts', [
        { client: { id: client }, firstName: 'A', isPrimary: true },
        { client: { id: client }, firstName: 'B', isPrimary: true },
      ]);
      assert.deepEqual(errorsOf(primaries), [code('conflict', 'isPrimary')]);
      // A unique custom value given twice in one batch.
      const def = await post('customFieldDefinitions', [
        { collection: 'clients', key: 'vat', label: 'VAT', type: 'text', unique: true },
      ]);
      assert.equal(def.status, 200, def.raw);
      const twice = await post('clients', [
        { name: 'X', customFields: { vat: 'GB1' } },
        { name: 'Y', customFields: { vat: 'GB1' } },
      ]);
      assert.equal(twice.status, 422, twice.raw);
      assert.deepEqual(errorsOf(twice), [code('unique', 'customFields.vat')]);
    });

    // Point 5.
    it('a job with quotes or invoices is not deleted: nothing numbered disappears, no line points at nothing', async () => {
      const { id: inv, job } = await issued(20);
      const refused = await call(t.app, a.token, 'DELETE', `/jobs/${job}`);
      assert.equal(refused.status, 422, refused.raw);
      assert.deepEqual(errorsOf(refused), [code('inUse', 'id')]);
      const number = (await get('invoices', inv)).number;
      assert.match(refused.body.failures[0].errors[0].message, new RegExp(number));
      assert.equal((await get('invoices', inv)).job.id, job);
      assert.equal((await list('charges', `job.id = ${job}`)).length, 1, 'the billed charge is kept');
      // A quote (numbered at creation), even a draft.
      const qJob = await newJob();
      const quote = (
        await post('quotes', [{ job: { id: qJob }, lines: [{ description: 'Q', quantity: 1, unitPrice: 1 }] }])
      ).body.quotes[0];
      const q = await call(t.app, a.token, 'DELETE', `/jobs/${qJob}`);
      assert.equal(q.status, 422);
      assert.match(q.body.failures[0].errors[0].message, new RegExp(quote.number));
      // A draft invoice keeps the job until it is deleted; then the job goes, with its charges.
      const dJob = await newJob();
      await charges(dJob, 2);
      const draft = (await post('invoices', [{ job: { id: dJob } }])).body.invoices[0].id;
      const d = await call(t.app, a.token, 'DELETE', `/jobs/${dJob}`);
      assert.equal(d.status, 422);
      assert.match(d.body.failures[0].errors[0].message, /draft invoice/);
      assert.equal((await call(t.app, a.token, 'DELETE', `/invoices/${draft}`)).status, 200);
      assert.equal((await call(t.app, a.token, 'DELETE', `/jobs/${dJob}`)).status, 200);
      assert.equal((await list('charges', `job.id = ${dJob}`)).length, 0);
      // Marking the job deleted (logically) is still allowed: everything stays.
      assert.equal((await patch('jobs', [{ id: job, deleted: true }])).status, 200);
      assert.equal((await get('invoices', inv)).number, number);
    });

    // Point 6.
    it('invoices and quotes built from a job keep the 200-line cap (a failure naming lines)', async () => {
      const job = await newJob();
      await charges(job, 201);
      const inv = await post('invoices', [{ job: { id: job } }]);
      assert.equal(inv.status, 422, inv.raw);
      assert.deepEqual(errorsOf(inv), [code('invalid', 'lines')]);
      const qJob = await newJob();
      await charges(qJob, 201, { stage: 'quoted' });
      const quote = await post('quotes', [{ job: { id: qJob } }]);
      assert.equal(quote.status, 422, quote.raw);
      assert.deepEqual(errorsOf(quote), [code('invalid', 'lines')]);
      assert.equal((await list('invoices', `job.id = ${job}`)).length, 0);
      // 200 is the cap, not past it.
      const okJob = await newJob();
      await charges(okJob, 200);
      assert.equal((await post('invoices', [{ job: { id: okJob } }])).body.invoices[0].lines.length, 200);
    });

    // Point 7.
    it('after draft only notes change: job, client, dates, lines and deleted are refused, by name', async () => {
      const { id } = await issued(10);
      const other = await newJob();
      const refused = await patch('invoices', [{ id, job: { id: other }, dueDate: '2040-01-01' }]);
      assert.equal(refused.status, 422, refused.raw);
      assert.deepEqual(errorsOf(refused).sort(), [code('conflict', 'dueDate'), code('conflict', 'job')]);
      assert.notEqual((await get('invoices', id)).job.id, other);
      assert.equal((await patch('invoices', [{ id, notes: 'Paid by phone' }])).status, 200);
      const qJob = await newJob();
      const quote = (
        await post('quotes', [{ job: { id: qJob }, lines: [{ description: 'Q', quantity: 1, unitPrice: 1 }] }])
      ).body.quotes[0].id;
      assert.equal((await act('quotes', quote, 'send')).status, 200);
      const q = await patch('quotes', [{ id: quote, job: { id: other } }]);
      assert.deepEqual(errorsOf(q), [code('conflict', 'job')]);
      assert.equal((await get('quotes', quote)).job.id, qJob);
      assert.equal((await patch('quotes', [{ id: quote, notes: 'Called' }])).status, 200);
    });

    // Point 3.
    it("parallel check-ins of one user's visits: no 500, one running entry, no overlap", async () => {
      const worker = await addUser(t, a, 'employee');
      const job = await newJob();
      const visits = (
        await post(
          'visits',
          Array.from({ length: 8 }, (_, i) => ({
            job: { id: job },
            user: { id: worker.id },
            label: 'Visit',
            startTime: `2031-02-01T${String(8 + i).padStart(2, '0')}:00:00Z`,
            endTime: `2031-02-01T${String(8 + i).padStart(2, '0')}:30:00Z`,
          })),
        )
      ).body.visits.map((v: { id: number }) => v.id);
      // The injected clock moves with real time here, as a server's does.
      const fixed = t.clock.now;
      Object.defineProperty(t.clock, 'now', { get: () => Date.now(), configurable: true });
      try {
        const results = await Promise.all(visits.map((v: number) => act('visits', v, 'checkIn', worker.token)));
        assert.deepEqual(
          results.map((r) => r.status),
          visits.map(() => 200),
          results.map((r) => r.raw).join('\n'),
        );
      } finally {
        Object.defineProperty(t.clock, 'now', { value: fixed, writable: true, configurable: true });
      }
      const entries = await list('timesheets', `user.id = ${worker.id}`);
      assert.equal(entries.length, 8);
      assert.equal(entries.filter((e: { endTime: string | null }) => e.endTime === null).length, 1);
      const spans = entries
        .map((e: { startTime: string; endTime: string | null }) => [
          Date.parse(e.startTime),
          e.endTime ? Date.parse(e.endTime) : Infinity,
        ])
        .sort((x: number[], y: number[]) => x[0] - y[0]);
      for (let i = 1; i < spans.length; i++) assert.ok(spans[i][0] >= spans[i - 1][1], JSON.stringify(spans));
    });

    // Point 4.
    it("an invoice from a job racing the job's deletion: one of them wins, never a 500", async () => {
      for (let round = 0; round < 6; round++) {
        const job = await newJob();
        await charges(job, 3);
        const [inv, del] = await Promise.all([
          post('invoices', [{ job: { id: job } }]),
          call(t.app, a.token, 'DELETE', `/jobs/${job}`),
        ]);
        assert.ok(inv.status < 500 && del.status < 500, `${inv.raw}\n${del.raw}`);
        if (del.status === 200) {
          // The job went first: the invoice names it, and no charge of it is left billed.
          assert.equal(inv.status, 422, inv.raw);
          assert.deepEqual(errorsOf(inv), [code('reference', 'job')]);
        } else {
          assert.equal(inv.status, 200, inv.raw);
          assert.deepEqual(errorsOf(del), [code('inUse', 'id')]);
          assert.equal(inv.body.invoices[0].lines.length, 3);
        }
      }
    });

    // The class, as a property: random batches of payments and of invoices from jobs behave as
    // their items sent one after another (a model), and never bill twice or overpay.
    it('property: random batches of payments and of invoices from jobs match the items one after another', async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.array(fc.integer({ min: 1, max: 60 }), { minLength: 1, maxLength: 6 }),
          fc.array(fc.integer({ min: 0, max: 2 }), { minLength: 1, maxLength: 5 }),
          async (amounts, jobPicks) => {
            // Payments against a balance of 100.
            const { id } = await issued(100);
            const res = await post(
              'payments',
              amounts.map((amount) => ({ invoice: { id }, amount })),
            );
            // The model: each item checked against the balance the written items before it left;
            // once one fails nothing more is written, the later ones are still checked.
            let balance = 100;
            const invalid: number[] = [];
            amounts.forEach((x, i) => {
              if (x > balance) invalid.push(i);
              else if (!invalid.length) balance -= x;
            });
            const fits = amounts.reduce((s, x) => s + x, 0) <= 100;
            assert.equal(res.status, fits ? 200 : 422, res.raw);
            assert.deepEqual(res.body.metadata.invalidItems ?? [], invalid);
            const inv = await get('invoices', id);
            const paid = fits ? amounts.reduce((s, x) => s + x, 0) : 0;
            assert.deepEqual(
              [inv.amountPaid, inv.balance, inv.state],
              [paid, 100 - paid, paid === 100 ? 'paid' : 'issued'],
            );
            // Invoices from a random pick of three jobs, some picked more than once.
            const jobs = [await newJob(), await newJob(), await newJob()];
            const made = await Promise.all(jobs.map((j, k) => charges(j, k + 1)));
            const batch = await post(
              'invoices',
              jobPicks.map((k) => ({ job: { id: jobs[k] } })),
            );
            assert.equal(batch.status, 200, batch.raw);
            const seen = new Set<number>();
            batch.body.invoices.forEach((invoice: { lines: { charge: { id: number } }[] }, i: number) => {
              const k = jobPicks[i];
              const first = jobPicks.indexOf(k) === i;
              // The first invoice of a job bills all its charges; a later one of the same job, none.
              assert.deepEqual(
                invoice.lines.map((l) => l.charge.id),
                first ? made[k] : [],
              );
              for (const l of invoice.lines) {
                assert.ok(!seen.has(l.charge.id), 'a charge billed twice');
                seen.add(l.charge.id);
              }
            });
          },
        ),
        { numRuns: 12 },
      );
    });
  });
}
