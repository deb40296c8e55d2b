import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { DIALECTS, addUser, suiteWithTenants, call, skipUnless } from './helpers.js';
import { greatCircleKm, travelSeconds } from '../src/domain/planning/travel.js';

const JOB = { lat: 53.8, lng: -1.55 };
const CREW = { lat: 53.85, lng: -1.5 };

for (const dialect of DIALECTS) {
  describe(`POST /visits/:id/onMyWay (${dialect})`, { skip: skipUnless(dialect) }, () => {
    const { t, a, b } = suiteWithTenants(dialect);
    const post = async (col: string, item: unknown, token = a.token) => {
      const res = await call(t.app, token, 'POST', `/${col}`, { [col]: [item] });
      assert.equal(res.status, 200, res.raw);
      return res.body[col][0];
    };
    const visitFor = async (userId: number, clientExtra: Record<string, unknown> = {}) => {
      const client = await post('clients', {
        name: 'Ann',
        email: `ann${Math.random()}@client.example`,
        ...clientExtra,
      });
      const job = await post('jobs', {
        title: 'Leaking tap',
        client: { id: client.id },
        address: { line1: '1 High St', location: JOB },
      });
      const start = new Date(t.clock.now + 3_600_000).toISOString();
      const end = new Date(t.clock.now + 7_200_000).toISOString();
      const visit = await post('visits', {
        job: { id: job.id },
        user: { id: userId },
        label: 'Fix',
        startTime: start,
        endTime: end,
      });
      return { client, job, visit };
    };
    const messagesOf = async (visitId: number) =>
      (await call(t.app, a.token, 'GET', `/messages?where=visit.id=${visitId}&fields=*`)).body.messages;

    it("travelling with the ETA from the crew's latest ping, and a message to the client", async () => {
      const con = await addUser(t, a, 'contractor');
      const { visit, client } = await visitFor(con.id);
      // An old ping is ignored; the latest of the last 30 minutes counts.
      await post(
        'locations',
        { lat: 10, lng: 10, recordedAt: new Date(t.clock.now - 40 * 60_000).toISOString() },
        con.token,
      );
      await post('locations', { ...CREW, recordedAt: new Date(t.clock.now - 60_000).toISOString() }, con.token);
      const res = await call(t.app, con.token, 'POST', `/visits/${visit.id}/onMyWay`);
      assert.equal(res.status, 200, res.raw);
      const v = res.body.visits[0];
      assert.equal(v.state, 'travelling');
      const expected = t.clock.now + travelSeconds(greatCircleKm(CREW, JOB), 40) * 1000;
      assert.equal(Date.parse(v.eta), expected);
      const [m] = await messagesOf(visit.id);
      assert.equal(m.to, client.email);
      assert.equal(m.state, 'queued');
      assert.match(m.subject, /is on the way/);
      assert.match(m.text, /should arrive at about \d\d:\d\d UTC/);
      // Only from scheduled.
      const again = await call(t.app, con.token, 'POST', `/visits/${visit.id}/onMyWay`);
      assert.equal(again.status, 422, again.raw);
      const events = (await call(t.app, a.token, 'GET', `/events?where=collection='visits' and item.id=${visit.id}`))
        .body.events;
      assert.ok(
        events.some(
          (e: { changes: Record<string, { new: unknown }> | null }) => e.changes?.state?.new === 'travelling',
        ),
      );
    });

    it('no recent ping: eta null; an opted-out client gets a failed message; others may not', async () => {
      const con = await addUser(t, a, 'contractor');
      const other = await addUser(t, a, 'contractor');
      const { visit } = await visitFor(con.id, { emailOptOut: true });
      assert.equal((await call(t.app, other.token, 'POST', `/visits/${visit.id}/onMyWay`)).status, 404);
      assert.equal((await call(t.app, b.token, 'POST', `/visits/${visit.id}/onMyWay`)).status, 404);
      const emp = await addUser(t, a, 'employee');
      const res = await call(t.app, emp.token, 'POST', `/visits/${visit.id}/onMyWay`);
      assert.equal(res.status, 200, res.raw);
      assert.equal(res.body.visits[0].eta, null);
      const [m] = await messagesOf(visit.id);
      assert.equal(m.state, 'failed');
      assert.equal(m.lastError, 'opted out');
      assert.doesNotMatch(m.text, /arrive/);
    });
  });
}
