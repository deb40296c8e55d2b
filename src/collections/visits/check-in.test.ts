import { before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { DIALECTS, addUser, call, suiteWithTenants, errorsOf, skipUnless } from '../../../test/helpers.js';

/** PRODUCT §11: a visit's check-in and check-out, and the running work entry they start and end. */
for (const dialect of DIALECTS) {
  describe(`visits checkIn/checkOut (${dialect})`, { skip: skipUnless(dialect) }, () => {
    const { t, a, b } = suiteWithTenants(dialect);
    let jobA: number;
    let crew: { id: number; token: string };
    let other: { id: number; token: string };
    let employee: { id: number; token: string };
    before(async () => {
      jobA = (await call(t.app, a.token, 'POST', '/jobs', { jobs: [{ title: 'A job' }] })).body.jobs[0].id;
      crew = await addUser(t, a, 'contractor');
      other = await addUser(t, a, 'contractor');
      employee = await addUser(t, a, 'employee');
    });

    const newVisit = async (extra: Record<string, unknown> = {}) => {
      const res = await call(t.app, a.token, 'POST', '/visits', {
        visits: [
          {
            job: { id: jobA },
            user: { id: crew.id },
            label: 'Visit',
            startTime: '2030-01-01T09:00:00Z',
            endTime: '2030-01-01T11:00:00Z',
            ...extra,
          },
        ],
      });
      assert.equal(res.status, 200, res.raw);
      return res.body.visits[0].id as number;
    };
    const step = (id: number, s: string, body?: unknown, token = crew.token) =>
      call(t.app, token, 'POST', `/visits/${id}/${s}`, body);
    const entriesOf = async (userId: number) =>
      (await call(t.app, a.token, 'GET', `/timesheets?where=${encodeURIComponent(`user.id = ${userId}`)}&sort=id`)).body
        .timesheets as any[];
    const lastEvent = async () => {
      const res = await call(t.app, a.token, 'GET', '/events?sort=-id&recordsPerPage=20');
      return res.body.events as any[];
    };

    it('a new visit has no check-in yet: the four fields are null', async () => {
      const id = await newVisit();
      const v = (await call(t.app, a.token, 'GET', `/visits/${id}`)).body.visits[0];
      assert.equal(v.checkInTime, null);
      assert.equal(v.checkOutTime, null);
      assert.equal(v.checkInLocation, null);
      assert.equal(v.checkOutLocation, null);
      const sent = await call(t.app, a.token, 'PATCH', `/visits/${id}`, {
        visits: [{ checkInTime: '2030-01-01T09:00:00Z' }],
      });
      assert.equal(sent.status, 422);
      assert.deepEqual(errorsOf(sent), ['1042:checkInTime']);
    });

    it('checkIn: onSite, server time, location, a running work entry; checkOut ends it at the same instant', async () => {
      const id = await newVisit({ state: 'travelling' });
      t.clock.now += 1000;
      const inAt = t.clock.now;
      const before = (await lastEvent())[0]?.id ?? 0;
      const res = await step(id, 'checkIn', { visits: [{ location: { lat: 51.5, lng: -0.12, accuracy: 8 } }] });
      assert.equal(res.status, 200, res.raw);
      const v = res.body.visits[0];
      assert.equal(v.id, id);
      assert.equal(v.state, 'onSite');
      assert.equal(Date.parse(v.checkInTime), inAt);
      assert.deepEqual(v.checkInLocation, { lat: 51.5, lng: -0.12, accuracy: 8 });
      assert.equal(v.checkOutTime, null);
      let entries = await entriesOf(crew.id);
      const entry = entries.find((e) => e.visit?.id === id);
      assert.ok(entry, JSON.stringify(entries));
      assert.equal(entry.kind, 'work');
      assert.deepEqual(entry.job, { id: jobA });
      assert.equal(Date.parse(entry.startTime), inAt);
      assert.equal(entry.endTime, null);
      assert.equal(entry.duration, null);
      // Each change is an event, in the same transaction.
      const events = (await lastEvent()).filter((e) => e.id > before);
      assert.deepEqual(events.map((e) => e.type).sort(), ['timesheets.created', 'visits.updated']);
      const upd = events.find((e) => e.type === 'visits.updated');
      assert.deepEqual(upd.changes.state, { old: 'travelling', new: 'onSite' });
      assert.equal(upd.actor.id, crew.id);

      t.clock.now += 90_500;
      const out = await step(id, 'checkOut', undefined);
      assert.equal(out.status, 200, out.raw);
      assert.equal(out.body.visits[0].state, 'completed');
      assert.equal(Date.parse(out.body.visits[0].checkOutTime), t.clock.now);
      assert.equal(out.body.visits[0].checkOutLocation, null);
      assert.deepEqual(out.body.visits[0].checkInLocation, { lat: 51.5, lng: -0.12, accuracy: 8 });
      entries = await entriesOf(crew.id);
      const ended = entries.find((e) => e.id === entry.id);
      assert.equal(Date.parse(ended.endTime), t.clock.now);
      assert.equal(ended.duration, 90, 'whole seconds, rounded down');
    });

    it("a check-in ends the user's running entry at the same instant; that visit stays onSite", async () => {
      const first = await newVisit();
      const second = await newVisit();
      t.clock.now += 1000;
      assert.equal((await step(first, 'checkIn', { visits: [{}] })).status, 200);
      t.clock.now += 60_000;
      const at = t.clock.now;
      const res = await step(second, 'checkIn', undefined, employee.token);
      assert.equal(res.status, 200, res.raw);
      const entries = await entriesOf(crew.id);
      const e1 = entries.find((e) => e.visit?.id === first);
      const e2 = entries.find((e) => e.visit?.id === second);
      assert.equal(Date.parse(e1.endTime), at);
      assert.equal(e1.duration, 60);
      assert.equal(Date.parse(e2.startTime), at);
      assert.equal(e2.endTime, null);
      assert.equal(entries.filter((e) => e.endTime === null).length, 1, 'at most one running entry');
      assert.equal((await call(t.app, a.token, 'GET', `/visits/${first}`)).body.visits[0].state, 'onSite');
      // Checking out the first visit ends nothing: its entry is no longer running.
      t.clock.now += 1000;
      assert.equal((await step(first, 'checkOut', undefined, a.token)).status, 200);
      const again = await entriesOf(crew.id);
      assert.equal(again.find((e) => e.id === e1.id).endTime, e1.endTime);
      assert.equal(again.find((e) => e.id === e2.id).endTime, null);
      t.clock.now += 1000;
      assert.equal((await step(second, 'checkOut', undefined, a.token)).status, 200);
    });

    it('another state, or no user: 422 (1350) and nothing changed', async () => {
      const done = await newVisit({ state: 'completed' });
      const cancelled = await newVisit({ state: 'cancelled' });
      const scheduled = await newVisit();
      const nobody = await newVisit({ user: null });
      const count = (await entriesOf(crew.id)).length;
      const versions = async () =>
        (await call(t.app, a.token, 'GET', `/visits?where=${encodeURIComponent(`id >= ${done}`)}&fields=*`)).body
          .visits;
      const snapshot = await versions();
      for (const [id, s] of [
        [done, 'checkIn'],
        [cancelled, 'checkIn'],
        [nobody, 'checkIn'],
        [scheduled, 'checkOut'],
        [done, 'checkOut'],
      ] as const) {
        const res = await step(id, s, undefined, a.token);
        assert.equal(res.status, 422, `${id} ${s}: ${res.raw}`);
        assert.equal(res.body.result, 'error');
        assert.equal(res.body.error.code, 1350);
      }
      assert.deepEqual(await versions(), snapshot);
      assert.equal((await entriesOf(crew.id)).length, count);
      // onSite twice: the second check-in is refused.
      t.clock.now += 1000;
      assert.equal((await step(scheduled, 'checkIn')).status, 200);
      const twice = await step(scheduled, 'checkIn');
      assert.equal(twice.status, 422);
      assert.equal(twice.body.error.code, 1350);
      t.clock.now += 1000;
      assert.equal((await step(scheduled, 'checkOut')).status, 200);
    });

    it('who: the visit user, Administrators, Employees; another Contractor does not see it; another account neither', async () => {
      const id = await newVisit();
      const res = await step(id, 'checkIn', undefined, other.token);
      assert.equal(res.status, 404, res.raw);
      const fromB = await step(id, 'checkIn', undefined, b.token);
      assert.equal(fromB.status, 404, fromB.raw);
      const noWrite = await step(
        id,
        'checkIn',
        undefined,
        await a.tokenFor(crew.id, ['visits.read', 'timesheets.read']),
      );
      assert.equal(noWrite.status, 403, noWrite.raw);
      assert.equal((await call(t.app, a.token, 'GET', `/visits/${id}`)).body.visits[0].state, 'scheduled');
      t.clock.now += 1000;
      assert.equal((await step(id, 'checkIn', undefined, employee.token)).status, 200);
      t.clock.now += 1000;
      assert.equal((await step(id, 'checkOut', undefined, crew.token)).status, 200);
    });

    it('concurrent check-ins of one user: never two running entries, never an overlap', async () => {
      const worker = await addUser(t, a, 'employee');
      const ids = [];
      for (let i = 0; i < 8; i++) ids.push(await newVisit({ user: { id: worker.id } }));
      t.clock.now += 1000;
      const results = await Promise.all(ids.map((id) => step(id, 'checkIn', undefined, a.token)));
      for (const r of results) assert.ok(r.status === 200 || r.body.error?.code === 1350, r.raw);
      assert.ok(results.some((r) => r.status === 200));
      const entries = (await entriesOf(worker.id)).filter((e) => !e.deleted);
      assert.equal(entries.filter((e) => e.endTime === null).length, 1, JSON.stringify(entries));
      const ms = entries.map((e) => [Date.parse(e.startTime), e.endTime ? Date.parse(e.endTime) : Infinity]);
      for (const [i, [s1, e1]] of ms.entries())
        for (const [s2, e2] of ms.slice(i + 1)) assert.ok(e1 <= s2 || e2 <= s1, JSON.stringify(entries));
      const onSite = (
        await call(t.app, a.token, 'GET', `/visits?where=${encodeURIComponent(`user.id = ${worker.id}`)}`)
      ).body.visits.filter((v: any) => v.state === 'onSite');
      assert.equal(onSite.length, results.filter((r) => r.status === 200).length);
    });

    it('a check-in and a PATCH of the running entry at the same moment never deadlock (no 5xx)', async () => {
      const worker = await addUser(t, a, 'employee');
      t.clock.now += 1000;
      assert.equal(
        (await step(await newVisit({ user: { id: worker.id } }), 'checkIn', undefined, a.token)).status,
        200,
      );
      for (let i = 0; i < 8; i++) {
        const running = (await entriesOf(worker.id)).find((e) => e.endTime === null);
        const next = await newVisit({ user: { id: worker.id } });
        t.clock.now += 1000;
        const [checkedIn, patched] = await Promise.all([
          step(next, 'checkIn', undefined, a.token),
          call(t.app, a.token, 'PATCH', `/timesheets/${running.id}`, { timesheets: [{ notes: `edit ${i}` }] }),
        ]);
        assert.equal(checkedIn.status, 200, checkedIn.raw);
        assert.equal(patched.status, 200, patched.raw);
      }
      assert.equal((await entriesOf(worker.id)).filter((e) => e.endTime === null).length, 1);
    });

    it("a check-in whose running entry would overlap one of the user's later entries: 422 (1350), nothing changed", async () => {
      const worker = await addUser(t, a, 'employee');
      const later = await call(t.app, a.token, 'POST', '/timesheets', {
        timesheets: [
          {
            user: { id: worker.id },
            startTime: new Date(t.clock.now + 3_600_000).toISOString(),
            endTime: new Date(t.clock.now + 7_200_000).toISOString(),
          },
        ],
      });
      assert.equal(later.status, 200, later.raw);
      const id = await newVisit({ user: { id: worker.id } });
      const res = await step(id, 'checkIn', undefined, a.token);
      assert.equal(res.status, 422, res.raw);
      assert.equal(res.body.error.code, 1350);
      assert.equal((await entriesOf(worker.id)).length, 1);
      assert.equal((await call(t.app, a.token, 'GET', `/visits/${id}`)).body.visits[0].state, 'scheduled');
    });

    it('a retried check-in with the same Idempotency-Key is answered again, not done twice', async () => {
      const id = await newVisit();
      t.clock.now += 1000;
      const key = { 'idempotency-key': `check-in-${id}` };
      const first = await call(t.app, crew.token, 'POST', `/visits/${id}/checkIn`, undefined, key);
      assert.equal(first.status, 200, first.raw);
      t.clock.now += 1000;
      const again = await call(t.app, crew.token, 'POST', `/visits/${id}/checkIn`, undefined, key);
      assert.equal(again.status, 200, again.raw);
      assert.equal(again.headers['idempotency-replayed'], 'true');
      assert.equal(again.raw, first.raw);
      assert.equal((await entriesOf(crew.id)).filter((e) => e.visit?.id === id).length, 1);
      t.clock.now += 1000;
      assert.equal((await step(id, 'checkOut')).status, 200);
    });

    it('bad locations and bodies are refused, naming the field; nothing changed', async () => {
      const id = await newVisit();
      for (const [loc, field] of [
        [{ lat: 91, lng: 0 }, 'location.lat'],
        [{ lat: 0, lng: -180.5 }, 'location.lng'],
        [{ lat: 0, lng: 0, accuracy: -1 }, 'location.accuracy'],
        [{ lat: '1', lng: 0 }, 'location.lat'],
        [{ lng: 0 }, 'location.lat'],
      ] as const) {
        const res = await step(id, 'checkIn', { visits: [{ location: loc }] });
        assert.equal(res.status, 422, res.raw);
        assert.deepEqual(errorsOf(res), [`1041:${field}`], JSON.stringify(loc));
      }
      const unknown = await step(id, 'checkIn', { visits: [{ where: 'here' }] });
      assert.deepEqual(errorsOf(unknown), ['1043:where']);
      assert.equal((await step(id, 'checkIn', { jobs: [] })).body.error.code, 1247);
      assert.equal((await step(id, 'checkIn', { visits: [{}, {}] })).body.error.code, 1248);
      assert.equal((await call(t.app, a.token, 'GET', `/visits/${id}`)).body.visits[0].state, 'scheduled');
      assert.equal((await step(999_999, 'checkIn')).status, 404);
    });
  });
}
