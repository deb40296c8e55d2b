import { before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { DIALECTS, addUser, call, suiteWithTenants, errorsOf, skipUnless } from '../../../test/helpers.js';
import { ERRORS, VALIDATION } from '../../errors.js';

const code = (kind: keyof typeof VALIDATION, field: string) => `${VALIDATION[kind].code}:${field}`;
const STATE = ERRORS.stateForbids.code;

for (const dialect of DIALECTS) {
  describe(`quotes (${dialect})`, { skip: skipUnless(dialect) }, () => {
    const { t, a, b } = suiteWithTenants(dialect);
    let client: number;
    let job: number;
    before(async () => {
      client = (await call(t.app, a.token, 'POST', '/clients', { clients: [{ name: 'Customer' }] })).body.clients[0].id;
      job = (await call(t.app, a.token, 'POST', '/jobs', { jobs: [{ title: 'J', client: { id: client } }] })).body
        .jobs[0].id;
    });

    const post = (col: string, items: unknown[], token = a.token) =>
      call(t.app, token, 'POST', `/${col}`, { [col]: items });
    const action = (id: number, name: string, token = a.token) => call(t.app, token, 'POST', `/quotes/${id}/${name}`);

    it("copies the job's quoted charges, numbers Q-000001… at creation, and moves through its states", async () => {
      const made = await post('charges', [
        {
          job: { id: job },
          kind: 'labour',
          description: 'Quoted work',
          unitPrice: 99.99,
          quantity: 2,
          stage: 'quoted',
        },
        { job: { id: job }, kind: 'labour', description: 'Actual work', unitPrice: 5, quantity: 1 },
        {
          job: { id: job },
          kind: 'material',
          description: 'Gone',
          unitPrice: 1,
          quantity: 1,
          stage: 'quoted',
          deleted: true,
        },
      ]);
      assert.equal(made.status, 200, made.raw);
      const q = await post('quotes', [{ job: { id: job } }, { job: { id: job }, lines: [] }]);
      assert.equal(q.status, 200, q.raw);
      const [q1, q2] = q.body.quotes;
      assert.deepEqual([q1.number, q2.number], ['Q-000001', 'Q-000002']);
      assert.deepEqual(
        q1.lines.map((l: { description: string; total: number }) => [l.description, l.total]),
        [['Quoted work', 199.98]],
      );
      assert.deepEqual([q1.state, q1.client.id, q1.total, q1.currency], ['draft', client, 199.98, 'USD']);
      // A refused create uses no number.
      assert.equal(
        (await post('quotes', [{ job: { id: job }, lines: [{ description: 'x', quantity: 0, unitPrice: 1 }] }])).status,
        422,
      );
      assert.equal((await post('quotes', [{ job: { id: job }, lines: [] }])).body.quotes[0].number, 'Q-000003');
      // States: send needs lines; accept/decline need sent; each refusal is 1280 and changes nothing.
      assert.equal((await action(q2.id, 'send')).body.error.code, STATE);
      assert.equal((await action(q1.id, 'accept')).body.error.code, STATE);
      assert.equal((await action(q1.id, 'invoice')).body.error.code, STATE);
      const sent = await action(q1.id, 'send');
      assert.equal(sent.status, 200, sent.raw);
      assert.equal(sent.body.quotes[0].state, 'sent');
      assert.deepEqual(errorsOf(await call(t.app, a.token, 'PATCH', `/quotes/${q1.id}`, { quotes: [{ lines: [] }] })), [
        code('conflict', 'lines'),
      ]);
      assert.equal(
        (await call(t.app, a.token, 'PATCH', `/quotes/${q1.id}`, { quotes: [{ notes: 'ok' }] })).status,
        200,
      );
      assert.equal((await action(q1.id, 'send')).body.error.code, STATE);
      assert.equal((await action(q1.id, 'accept')).body.quotes[0].state, 'accepted');
      assert.equal((await action(q1.id, 'decline')).body.error.code, STATE);
      // An accepted quote becomes one draft invoice; a second is refused while that one is not void.
      const [inv, again] = await Promise.all([action(q1.id, 'invoice'), action(q1.id, 'invoice')]);
      const ok = [inv, again].filter((r) => r.status === 200);
      assert.equal(ok.length, 1, `${inv.raw} ${again.raw}`);
      assert.equal([inv, again].find((r) => r.status !== 200)!.body.error.code, STATE);
      const i = ok[0].body.invoices[0];
      assert.deepEqual(
        [i.state, i.quote, i.job, i.client, i.total],
        ['draft', { id: q1.id }, { id: job }, { id: client }, 199.98],
      );
      assert.deepEqual(
        i.lines.map((l: { description: string; charge: unknown }) => [l.description, l.charge]),
        [['Quoted work', null]],
      );
      // Declined.
      const q3 = (await post('quotes', [{ job: { id: job } }])).body.quotes[0].id;
      await action(q3, 'send');
      assert.equal((await action(q3, 'decline')).body.quotes[0].state, 'declined');
      // Roles and accounts.
      const con = await addUser(t, a, 'contractor');
      assert.equal((await call(t.app, con.token, 'GET', '/quotes')).status, 403);
      assert.equal((await action(q3, 'send', con.token)).status, 403);
      assert.equal((await action(q3, 'send', b.token)).status, 404);
    });

    it('pdf of a quote is stored as a file of the job', async () => {
      const q = (
        await post('quotes', [{ job: { id: job }, lines: [{ description: 'Survey', quantity: 1, unitPrice: 120 }] }])
      ).body.quotes[0];
      const res = await action(q.id, 'pdf');
      assert.equal(res.status, 200, res.raw);
      assert.equal(res.body.files[0].mimeType, 'application/pdf');
      assert.deepEqual(res.body.files[0].job, { id: job });
      assert.equal(res.body.files[0].name, `${q.number}.pdf`);
    });
  });
}
