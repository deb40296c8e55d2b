import { before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { DIALECTS, addUser, suiteWithTenants, call, errorsOf, skipUnless } from '../../../test/helpers.js';
import { VALIDATION } from '../../errors.js';
import { sqliteFile } from '../../config.js';
import { connect } from '../../db/index.js';
import { createServices } from '../../services.js';
import { periodsBegun } from './billing.js';
import { rollAgreements } from '../../collections/agreements/roll.js';

/** PRODUCT §16's billing: draft invoices per visit checked out, or per period begun; exactly once. */
const q = (s: string) => encodeURIComponent(s);
const DAY = 86_400_000;

describe('periodsBegun', () => {
  it('period k begins startDate + k months, quarters or years, clamped to the month', () => {
    assert.deepEqual(periodsBegun('2026-01-31', 'monthly', '2026-04-30'), [
      '2026-01-31',
      '2026-02-28',
      '2026-03-31',
      '2026-04-30',
    ]);
    assert.deepEqual(periodsBegun('2025-11-30', 'quarterly', '2026-08-29'), ['2025-11-30', '2026-02-28', '2026-05-30']);
    assert.deepEqual(periodsBegun('2024-02-29', 'yearly', '2028-02-29'), [
      '2024-02-29',
      '2025-02-28',
      '2026-02-28',
      '2027-02-28',
      '2028-02-29',
    ]);
    assert.deepEqual(periodsBegun('2026-05-01', 'monthly', '2026-04-30'), []);
    assert.deepEqual(periodsBegun('2026-01-01', 'perVisit', '2026-04-30'), []);
  });
});

for (const dialect of DIALECTS) {
  describe(`agreements' billing (${dialect})`, { skip: skipUnless(dialect) }, () => {
    const { t, a } = suiteWithTenants(dialect);
    let token: string;
    let client: number;
    let site: number;
    let crew: number;
    // Friday 20 March 2026, 12:00 in Berlin.
    const NOW = Date.parse('2026-03-20T11:00:00Z');
    before(async () => {
      t.clock.now = NOW;
      token = await a.tokenFor(a.adminId);
      await t.database.db
        .updateTable('accounts')
        .set({ time_zone: 'Europe/Berlin' })
        .where('id', '=', a.accountId)
        .execute();
      client = (await post('clients', [{ name: 'Acme' }])).body.clients[0].id;
      site = (await post('sites', [{ client: { id: client }, name: 'HQ' }])).body.sites[0].id;
      crew = (await addUser(t, a, 'employee')).id;
    });
    const post = (col: string, items: unknown[]) => call(t.app, token, 'POST', `/${col}`, { [col]: items });
    const get = (url: string) => call(t.app, token, 'GET', url);
    const at = async (ms: number) => {
      t.clock.now = ms;
      token = await a.tokenFor(a.adminId);
    };
    const base = (extra: Record<string, unknown>) => ({
      client: { id: client },
      site: { id: site },
      name: 'Care plan',
      jobTitle: 'Service',
      startDate: '2026-03-20',
      recurrence: 'FREQ=WEEKLY',
      horizonDays: 14,
      price: 49.5,
      ...extra,
    });
    const agreement = async (extra: Record<string, unknown>) => {
      const res = await post('agreements', [base(extra)]);
      assert.equal(res.status, 200, res.raw);
      return res.body.agreements[0].id as number;
    };
    const invoicesOf = async (id: number) => {
      const res = await get(`/invoices?where=${q(`agreement.id = ${id}`)}&sort=id&recordsPerPage=1000&fields=*`);
      assert.equal(res.status, 200, res.raw);
      return res.body.invoices as any[];
    };
    const periodsOf = async (id: number) => {
      const rows = await t.database.db
        .selectFrom('invoices')
        .select('agreement_period')
        .where('account_id', '=', a.accountId)
        .where('agreement_id', '=', id)
        .orderBy('agreement_period')
        .execute();
      return rows.map((r) => r.agreement_period);
    };

    it('billing other than none without a price fails naming price; nothing written', async () => {
      const before = (await get('/invoices?recordsPerPage=1')).body.metadata;
      for (const billing of ['perVisit', 'monthly', 'quarterly', 'yearly']) {
        const res = await post('agreements', [base({ billing, price: null, startDate: '2025-01-01' })]);
        assert.equal(res.status, 422, res.raw);
        assert.deepEqual(errorsOf(res), [`${VALIDATION.invalid.code}:price`]);
      }
      assert.deepEqual((await get('/invoices?recordsPerPage=1')).body.metadata, before);
    });

    it('monthly from the 1st three months back: 4 drafts at once, one line each, agreement {id}', async () => {
      const id = await agreement({ billing: 'monthly', startDate: '2025-12-01' });
      const drafts = await invoicesOf(id);
      assert.equal(drafts.length, 4);
      assert.deepEqual(await periodsOf(id), ['2025-12-01', '2026-01-01', '2026-02-01', '2026-03-01']);
      for (const inv of drafts) {
        assert.equal(inv.state, 'draft');
        assert.equal(inv.number, null);
        assert.equal(inv.client.id, client);
        assert.equal(inv.job, null);
        assert.deepEqual(inv.agreement, { id });
        assert.equal(inv.lines.length, 1);
        assert.equal(inv.lines[0].description, 'Care plan');
        assert.equal(inv.lines[0].quantity, 1);
        assert.equal(inv.lines[0].unitPrice, 49.5);
        assert.equal(inv.total, 49.5);
        assert.equal(inv.balance, 49.5);
      }
      // A draft the agreement made is issued as any other.
      const issued = await call(t.app, token, 'POST', `/invoices/${drafts[0].id}/issue`);
      assert.equal(issued.status, 200, issued.raw);
      assert.match(issued.body.invoices[0].number, /^INV-\d{6}$/);
      // A PATCH of the agreement bills nothing twice.
      const res = await call(t.app, token, 'PATCH', '/agreements', { agreements: [{ id, name: 'Care plan+' }] });
      assert.equal(res.status, 200, res.raw);
      assert.equal((await invoicesOf(id)).length, 4);
      // A draft deleted by hand is not made again (its period was billed).
      const gone = await call(t.app, token, 'DELETE', `/invoices/${drafts[1].id}`);
      assert.equal(gone.status, 200, gone.raw);
      const again = await call(t.app, token, 'PATCH', '/agreements', { agreements: [{ id, name: 'Care plan' }] });
      assert.equal(again.status, 200, again.raw);
      assert.deepEqual(
        (await invoicesOf(id)).map((i) => i.id),
        [drafts[0].id, drafts[2].id, drafts[3].id],
      );
    });

    it('quarterly and yearly: every period begun, clamped; none past endDate; none for a future start', async () => {
      const quarterly = await agreement({ billing: 'quarterly', startDate: '2025-03-31' });
      assert.deepEqual(await periodsOf(quarterly), ['2025-03-31', '2025-06-30', '2025-09-30', '2025-12-31']);
      const yearly = await agreement({ billing: 'yearly', startDate: '2024-02-29' });
      assert.deepEqual(await periodsOf(yearly), ['2024-02-29', '2025-02-28', '2026-02-28']);
      const ended = await agreement({ billing: 'monthly', startDate: '2025-10-15', endDate: '2025-12-14' });
      assert.deepEqual(await periodsOf(ended), ['2025-10-15', '2025-11-15']);
      const future = await agreement({ billing: 'monthly', startDate: '2026-04-01' });
      assert.deepEqual(await periodsOf(future), []);
      const none = await agreement({ billing: 'none', startDate: '2025-01-01' });
      assert.deepEqual(await periodsOf(none), []);
    });

    it('the roll bills each later period on its first day (events with actor null); cancel stops it', async () => {
      const id = await agreement({ billing: 'monthly', startDate: '2026-03-20' });
      const cancelled = await agreement({ billing: 'monthly', startDate: '2026-03-20' });
      assert.equal((await call(t.app, token, 'POST', `/agreements/${cancelled}/cancel`)).status, 200);
      try {
        assert.deepEqual(await periodsOf(id), ['2026-03-20']);
        // 19 April: not yet.
        await at(NOW + 30 * DAY);
        await rollAgreements(t.services, () => t.clock.now);
        assert.deepEqual(await periodsOf(id), ['2026-03-20']);
        // 20 April, 00:30 in Berlin: the period begins.
        await at(Date.parse('2026-04-19T22:30:00Z'));
        await rollAgreements(t.services, () => t.clock.now);
        assert.deepEqual(await periodsOf(id), ['2026-03-20', '2026-04-20']);
        const made = (await invoicesOf(id)).at(-1);
        const events = (await get(`/events?where=${q(`collection = "invoices" and item.id = ${made.id}`)}&fields=*`))
          .body.events as any[];
        assert.equal(events.length, 1, JSON.stringify(events));
        assert.equal(events[0].actor, null);
        assert.equal(events[0].clientId, null);
        assert.deepEqual(await periodsOf(cancelled), ['2026-03-20']);
      } finally {
        await at(NOW);
      }
    });

    it('perVisit: a draft when a visit of an occurrence is checked out, never a second for it', async () => {
      const id = await agreement({ billing: 'perVisit', user: { id: crew }, recurrence: 'FREQ=DAILY', price: 80 });
      assert.deepEqual(await invoicesOf(id), [], 'nothing before a check-out');
      const jobs = (await get(`/jobs?where=${q(`agreement.id = ${id}`)}&sort=occurrence&recordsPerPage=2`)).body
        .jobs as any[];
      const visit = (await get(`/visits?where=${q(`job.id = ${jobs[0].id}`)}`)).body.visits[0];
      const step = (name: string) => call(t.app, token, 'POST', `/visits/${visit.id}/${name}`);
      assert.equal((await step('checkIn')).status, 200);
      assert.deepEqual(await invoicesOf(id), [], 'a check-in bills nothing');
      assert.equal((await step('checkOut')).status, 200);
      let drafts = await invoicesOf(id);
      assert.equal(drafts.length, 1);
      assert.equal(drafts[0].state, 'draft');
      assert.equal(drafts[0].job.id, jobs[0].id);
      assert.equal(drafts[0].client.id, client);
      assert.deepEqual(drafts[0].agreement, { id });
      assert.deepEqual(
        drafts[0].lines.map((l: any) => [l.description, l.quantity, l.unitPrice, l.total]),
        [['Care plan', 1, 80, 80]],
      );
      // A second check-out is refused; back to scheduled, checked in and out again: still one.
      assert.equal((await step('checkOut')).status, 422);
      const back = await call(t.app, token, 'PATCH', '/visits', { visits: [{ id: visit.id, state: 'scheduled' }] });
      assert.equal(back.status, 200, back.raw);
      assert.equal((await step('checkIn')).status, 200);
      assert.equal((await step('checkOut')).status, 200);
      drafts = await invoicesOf(id);
      assert.equal(drafts.length, 1);
      // A visit not of a per-visit agreement bills nothing.
      const monthly = await agreement({ billing: 'monthly', user: { id: crew }, recurrence: 'FREQ=DAILY' });
      const job = (await get(`/jobs?where=${q(`agreement.id = ${monthly}`)}&recordsPerPage=1`)).body.jobs[0];
      const other = (await get(`/visits?where=${q(`job.id = ${job.id}`)}`)).body.visits[0];
      assert.equal((await call(t.app, token, 'POST', `/visits/${other.id}/checkIn`)).status, 200);
      assert.equal((await call(t.app, token, 'POST', `/visits/${other.id}/checkOut`)).status, 200);
      assert.equal((await invoicesOf(monthly)).length, 1, 'its period only');
    });

    it('four rolls at once (two pools of one database): one invoice per period', async () => {
      const ids = [];
      for (let k = 0; k < 3; k++) ids.push(await agreement({ billing: 'monthly', startDate: '2026-03-10' }));
      const otherDb =
        dialect === 'postgres'
          ? await connect({ databaseUrl: t.config.databaseUrl, sqliteFile: sqliteFile(t.config), poolSize: 5 })
          : undefined;
      const other = otherDb ? createServices(t.config, otherDb) : t.services;
      try {
        // 10 June: April, May and June begun since.
        await at(Date.parse('2026-06-10T08:00:00Z'));
        const clock = () => t.clock.now;
        await Promise.all([
          rollAgreements(t.services, clock),
          rollAgreements(other, clock),
          rollAgreements(t.services, clock),
          rollAgreements(other, clock),
        ]);
        for (const id of ids)
          assert.deepEqual(await periodsOf(id), ['2026-03-10', '2026-04-10', '2026-05-10', '2026-06-10']);
      } finally {
        await at(NOW);
        await otherDb?.close();
      }
    });
  });
}
