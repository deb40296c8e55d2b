import { before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { DIALECTS, addUser, suiteWithTenants, call, errorsOf, skipUnless } from '../../../test/helpers.js';
import { checkPlan, dayOf, type PlanShown } from '../../../test/plan-checker.js';

/** PRODUCT §15: plans of a day, their invariants, apply, discard and stale. */
for (const dialect of DIALECTS) {
  describe(`plans (${dialect})`, { skip: skipUnless(dialect) }, () => {
    const { t, a } = suiteWithTenants(dialect);
    let skill: Record<'electric' | 'gas' | 'rare', number>;
    let u1: number;
    let u2: number;
    let u3: number;
    let contractor: { id: number; token: string };
    let employee: { id: number; token: string };
    // 2030-01-07 is a Monday.
    const DATE = '2030-01-07';
    const at = (date: string, hhmm: string) => `${date}T${hhmm}:00Z`;
    const post = (collection: string, items: unknown[], token = a.token) =>
      call(t.app, token, 'POST', `/${collection}`, { [collection]: items });
    const job = async (extra: Record<string, unknown>) => {
      const res = await post('jobs', [{ title: 'Job', ...extra }]);
      assert.equal(res.status, 200, res.raw);
      return res.body.jobs[0].id as number;
    };
    const visit = async (jobId: number, start: string, end: string, extra: Record<string, unknown> = {}) => {
      const res = await post('visits', [
        { job: { id: jobId }, label: 'Visit', startTime: start, endTime: end, ...extra },
      ]);
      assert.equal(res.status, 200, res.raw);
      return res.body.visits[0].id as number;
    };
    const plan = async (item: Record<string, unknown>, token = a.token) =>
      call(t.app, token, 'POST', '/plans', { plans: [item] });
    const near = (dLat: number, dLng: number) => ({
      location: { lat: Math.round((51.5 + dLat) * 1e6) / 1e6, lng: Math.round((-0.12 + dLng) * 1e6) / 1e6 },
    });

    before(async () => {
      const names = { electric: 'Electric', gas: 'Gas', rare: 'Rare' };
      const made = await post(
        'skills',
        Object.values(names).map((name) => ({ name })),
      );
      assert.equal(made.status, 200, made.raw);
      const ids = made.body.skills.map((s: { id: number }) => s.id);
      skill = { electric: ids[0], gas: ids[1], rare: ids[2] };
      const mon = (start: string, end: string) => ({ day: 'mon', start, end });
      u1 = (
        await addUser(t, a, 'employee', {
          workingHours: [mon('08:00', '17:00')],
          homeLocation: { lat: 51.5, lng: -0.12 },
          skills: [{ id: skill.electric }],
        })
      ).id;
      u2 = (
        await addUser(t, a, 'employee', {
          workingHours: [mon('08:00', '12:00'), mon('13:00', '17:00')],
          homeLocation: { lat: 51.53, lng: -0.08 },
          skills: [{ id: skill.electric }, { id: skill.gas }],
        })
      ).id;
      u3 = (await addUser(t, a, 'contractor', { workingHours: [mon('09:00', '13:00')] })).id;
      contractor = await addUser(t, a, 'contractor');
      employee = await addUser(t, a, 'employee');
      const leave = await post('unavailabilities', [
        { user: { id: u2 }, startTime: at(DATE, '13:00'), endTime: at(DATE, '15:00') },
      ]);
      assert.equal(leave.status, 200, leave.raw);
    });

    it('plans a small day: every invariant holds (checked independently), reasons for the unassigned', async () => {
      const plain = await job({ address: near(0.01, 0.01) });
      const electric = await job({ address: near(-0.01, 0.02), requiredSkills: [{ id: skill.electric }] });
      const gas = await job({ address: near(0.02, -0.01), requiredSkills: [{ id: skill.gas }] });
      const rare = await job({ address: near(0, 0.03), requiredSkills: [{ id: skill.rare }] });
      const nowhere = await job({});
      const v = {
        a: await visit(plain, at(DATE, '09:00'), at(DATE, '10:00')),
        b: await visit(electric, at(DATE, '09:00'), at(DATE, '10:30'), {
          arrivalWindowStart: at(DATE, '14:00'),
          arrivalWindowEnd: at(DATE, '15:00'),
        }),
        c: await visit(gas, at(DATE, '11:00'), at(DATE, '12:00'), { user: { id: u1 } }),
        d: await visit(plain, at(DATE, '12:00'), at(DATE, '12:45')),
        e: await visit(electric, at(DATE, '15:00'), at(DATE, '16:00')),
        noUser: await visit(rare, at(DATE, '10:00'), at(DATE, '11:00')),
        noLocation: await visit(nowhere, at(DATE, '10:00'), at(DATE, '11:00')),
        // Five hours of gas work: only u2 has gas, and none of u2's pieces is that long.
        noTime: await visit(gas, at(DATE, '08:00'), at(DATE, '13:00')),
      };
      // Stays as it is (locked): u1 is busy there 10:00–11:00 and the route goes around it.
      const locked = await visit(plain, at(DATE, '10:00'), at(DATE, '11:00'), { user: { id: u1 }, locked: true });

      const started = Date.now();
      const res = await plan({ date: DATE, timeLimitSeconds: 1 });
      assert.ok(Date.now() - started < 2000 + 1500, `answered in ${Date.now() - started} ms`);
      assert.equal(res.status, 200, res.raw);
      const p = res.body.plans[0] as PlanShown & Record<string, any>;
      assert.equal(p.state, 'proposed');
      assert.equal(p.date, DATE);
      assert.deepEqual(
        p.users.map((u) => u.id),
        [u1, u2, u3],
      );
      assert.deepEqual(
        p.visits.map((x) => x.id),
        Object.values(v).sort((x, y) => x - y),
      );
      assert.ok(!p.visits.some((x) => x.id === locked));
      const reasons = Object.fromEntries(p.unassigned.map((u) => [u.visit.id, u.reason]));
      assert.deepEqual(reasons, { [v.noUser]: 'noUser', [v.noLocation]: 'noLocation', [v.noTime]: 'noTime' });
      const routed = p.routes.flatMap((r) => r.steps.map((s) => s.visit.id)).sort((x, y) => x - y);
      assert.deepEqual(
        routed,
        [v.a, v.b, v.c, v.d, v.e].sort((x, y) => x - y),
      );
      // The gas visit goes to u2, the only one with gas.
      assert.equal(p.routes.find((r) => r.steps.some((s) => s.visit.id === v.c))!.user.id, u2);
      assert.deepEqual(checkPlan(await dayOf(t, a, DATE), p), []);
      assert.equal(typeof p.computeMilliseconds, 'number');
      assert.ok(p.travelSeconds > 0 && p.distanceKm > 0);
      // Now: only c has a user (u1, whose locked visit is a stop too).
      assert.ok(p.currentTravelSeconds > 0);
      assert.deepEqual(p.warnings, []);
      // Read back as made.
      const read = await call(t.app, a.token, 'GET', `/plans/${p.id}?fields=*`);
      assert.equal(read.status, 200, read.raw);
      assert.deepEqual(read.body.plans[0].routes, p.routes);
    });

    it('an unassigned visit keeps its user and the route goes around it (no double booking)', async () => {
      // 2030-01-14 is a Monday. u4 works 10:00–11:30 and keeps a visit nobody can take (a skill
      // no user of the plan has) at 10:00–11:00: the hour of work left cannot hold another visit.
      const date = '2030-01-14';
      const u4 = (
        await addUser(t, a, 'employee', {
          workingHours: [{ day: 'mon', start: '10:00', end: '11:30' }],
          homeLocation: { lat: 51.5, lng: -0.12 },
        })
      ).id;
      const rare = await job({ address: near(0.001, 0), requiredSkills: [{ id: skill.rare }] });
      const plain = await job({ address: near(0, 0.001) });
      const kept = await visit(rare, at(date, '10:00'), at(date, '11:00'), { user: { id: u4 } });
      const other = await visit(plain, at(date, '09:00'), at(date, '10:00'));
      const res = await plan({ date, users: [{ id: u4 }], visits: [{ id: kept }, { id: other }], timeLimitSeconds: 1 });
      assert.equal(res.status, 200, res.raw);
      const p = res.body.plans[0] as PlanShown & Record<string, any>;
      const reasons = Object.fromEntries(p.unassigned.map((u) => [u.visit.id, u.reason]));
      assert.deepEqual(reasons, { [kept]: 'noUser', [other]: 'noTime' });
      assert.deepEqual(p.routes, []);
      assert.deepEqual(checkPlan(await dayOf(t, a, date), p), []);
      // With room after it (u4 also works 13:00–15:00 that day), the other visit goes there.
      await call(t.app, a.token, 'PATCH', `/users/${u4}`, {
        users: [
          {
            workingHours: [
              { day: 'mon', start: '10:00', end: '11:30' },
              { day: 'mon', start: '13:00', end: '15:00' },
            ],
          },
        ],
      });
      const again = (
        await plan({ date, users: [{ id: u4 }], visits: [{ id: kept }, { id: other }], timeLimitSeconds: 1 })
      ).body.plans[0] as PlanShown & Record<string, any>;
      assert.deepEqual(
        again.unassigned.map((u) => u.visit.id),
        [kept],
      );
      const step = again.routes[0].steps[0];
      assert.equal(step.visit.id, other);
      assert.ok(Date.parse(step.startTime) >= Date.parse(at(date, '13:00')), step.startTime);
      assert.deepEqual(checkPlan(await dayOf(t, a, date), again), []);
    });

    it('bad input: each failure names its member', async () => {
      const plain = await job({ address: near(0, 0) });
      const locked = await visit(plain, at('2030-01-21', '10:00'), at('2030-01-21', '11:00'), { locked: true });
      const deleted = await visit(plain, at('2030-01-21', '10:00'), at('2030-01-21', '11:00'));
      assert.equal(
        (await call(t.app, a.token, 'PATCH', `/visits/${deleted}`, { visits: [{ deleted: true }] })).status,
        200,
      );
      const cases: [Record<string, unknown>, string][] = [
        [{}, '1040:date'],
        [{ date: '2030-02-31' }, '1041:date'],
        [{ date: 'tomorrow' }, '1041:date'],
        [{ date: '2030-01-21', users: [{ id: 999_999 }] }, '1045:users'],
        [{ date: '2030-01-21', users: 'all' }, '1041:users'],
        [{ date: '2030-01-21', visits: [{ id: locked }] }, '1041:visits'],
        [{ date: '2030-01-21', visits: [{ id: deleted }] }, '1041:visits'],
        [{ date: '2030-01-21', visits: [{ id: 999_999 }] }, '1045:visits'],
        [{ date: '2030-01-21', visits: Array.from({ length: 2001 }, (_, i) => ({ id: i + 1 })) }, '1041:visits'],
        [{ date: '2030-01-21', timeLimitSeconds: 0 }, '1041:timeLimitSeconds'],
        [{ date: '2030-01-21', timeLimitSeconds: 31 }, '1041:timeLimitSeconds'],
        [{ date: '2030-01-21', state: 'applied' }, '1042:state'],
      ];
      const two = await call(t.app, a.token, 'POST', '/plans', {
        plans: [
          { date: '2030-01-21', users: [], visits: [] },
          { date: '2030-01-22', users: [], visits: [] },
        ],
      });
      assert.equal(two.status, 422, two.raw);
      assert.deepEqual(errorsOf(two), ['1041:date']);
      for (const [item, want] of cases) {
        const res = await plan(item);
        assert.equal(res.status, 422, `${JSON.stringify(item).slice(0, 80)}: ${res.raw}`);
        assert.deepEqual(errorsOf(res), [want], JSON.stringify(item).slice(0, 80));
      }
    });

    it('roles: a Contractor is refused (403); an Employee plans', async () => {
      const res = await plan({ date: '2030-01-28', users: [], visits: [] }, contractor.token);
      assert.equal(res.status, 403, res.raw);
      assert.equal((await call(t.app, contractor.token, 'GET', '/plans')).status, 403);
      const ok = await plan({ date: '2030-01-28', users: [], visits: [], timeLimitSeconds: 1 }, employee.token);
      assert.equal(ok.status, 200, ok.raw);
      assert.deepEqual(ok.body.plans[0].routes, []);
    });

    it('apply: the routed visits move (an event each) and the plan is applied; a second apply is refused', async () => {
      const D = '2030-02-04';
      const plain = await job({ address: near(0.01, 0) });
      const x = await visit(plain, at(D, '06:00'), at(D, '07:00'));
      const y = await visit(plain, at(D, '20:00'), at(D, '20:30'), { user: { id: u2 } });
      const res = await plan({ date: D, users: [{ id: u1 }], visits: [{ id: x }, { id: y }], timeLimitSeconds: 1 });
      assert.equal(res.status, 200, res.raw);
      const p = res.body.plans[0];
      assert.equal(p.routes.length, 1);
      assert.equal(p.routes[0].steps.length, 2);
      assert.deepEqual(checkPlan(await dayOf(t, a, D), p), []);
      const lastEvent = async () =>
        ((await call(t.app, a.token, 'GET', '/events?sort=-id&recordsPerPage=1')).body.events[0]?.id ?? 0) as number;
      const since = await lastEvent();
      const applied = await call(t.app, a.token, 'POST', `/plans/${p.id}/apply`);
      assert.equal(applied.status, 200, applied.raw);
      assert.equal(applied.body.plans[0].state, 'applied');
      for (const s of p.routes[0].steps) {
        const v = (await call(t.app, a.token, 'GET', `/visits/${s.visit.id}`)).body.visits[0];
        assert.equal(v.user.id, u1);
        assert.equal(Date.parse(v.startTime), Date.parse(s.startTime));
        assert.equal(Date.parse(v.endTime), Date.parse(s.endTime));
      }
      const events = (await call(t.app, a.token, 'GET', '/events?sort=id&recordsPerPage=50')).body.events.filter(
        (e: any) => e.id > since,
      );
      assert.deepEqual(events.map((e: any) => e.type).sort(), ['plans.updated', 'visits.updated', 'visits.updated']);
      const again = await call(t.app, a.token, 'POST', `/plans/${p.id}/apply`);
      assert.equal(again.status, 422, again.raw);
      assert.match(again.raw, /1280/);
    });

    it('apply after a visit changed: 422, nothing moves, and the plan is stale', async () => {
      const D = '2030-02-11';
      const plain = await job({ address: near(0.01, 0) });
      const x = await visit(plain, at(D, '06:00'), at(D, '07:00'));
      const res = await plan({ date: D, users: [{ id: u1 }], visits: [{ id: x }], timeLimitSeconds: 1 });
      assert.equal(res.status, 200, res.raw);
      const p = res.body.plans[0];
      assert.equal(p.routes.length, 1);
      const changed = await call(t.app, a.token, 'PATCH', `/visits/${x}`, { visits: [{ notes: 'Ring twice' }] });
      assert.equal(changed.status, 200, changed.raw);
      const refused = await call(t.app, a.token, 'POST', `/plans/${p.id}/apply`);
      assert.equal(refused.status, 422, refused.raw);
      assert.match(refused.raw, /1280/);
      const v = (await call(t.app, a.token, 'GET', `/visits/${x}`)).body.visits[0];
      assert.equal(v.user, null);
      assert.equal(Date.parse(v.startTime), Date.parse(at(D, '06:00')));
      assert.equal((await call(t.app, a.token, 'GET', `/plans/${p.id}`)).body.plans[0].state, 'stale');

      // New leave of a plan user makes a plan stale too.
      const p2 = (await plan({ date: D, users: [{ id: u1 }], visits: [{ id: x }], timeLimitSeconds: 1 })).body.plans[0];
      assert.equal(
        (await post('unavailabilities', [{ user: { id: u1 }, startTime: at(D, '16:00'), endTime: at(D, '17:00') }]))
          .status,
        200,
      );
      assert.equal((await call(t.app, a.token, 'POST', `/plans/${p2.id}/apply`)).status, 422);
      assert.equal((await call(t.app, a.token, 'GET', `/plans/${p2.id}`)).body.plans[0].state, 'stale');
    });

    it('discard: a proposed plan is discarded, and can then be neither applied nor discarded', async () => {
      const p = (await plan({ date: '2030-02-18', users: [], visits: [], timeLimitSeconds: 1 })).body.plans[0];
      const res = await call(t.app, a.token, 'POST', `/plans/${p.id}/discard`);
      assert.equal(res.status, 200, res.raw);
      assert.equal(res.body.plans[0].state, 'discarded');
      assert.equal((await call(t.app, a.token, 'POST', `/plans/${p.id}/apply`)).status, 422);
      assert.equal((await call(t.app, a.token, 'POST', `/plans/${p.id}/discard`)).status, 422);
      const patched = await call(t.app, a.token, 'PATCH', `/plans/${p.id}`, { plans: [{ date: '2030-02-19' }] });
      assert.equal(patched.status, 422);
      assert.deepEqual(errorsOf(patched), ['1052:date']);
    });
  });
}
