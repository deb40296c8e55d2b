import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { DIALECTS, addUser, suiteWithTenants, call, errorsOf, newUser, skipUnless } from '../../../test/helpers.js';
import { VALIDATION } from '../../errors.js';

/** PRODUCT §15's model: skills, users' working hours, home and skills, jobs' required skills, visits' windows. */
const code = (kind: keyof typeof VALIDATION, field: string) => `${VALIDATION[kind].code}:${field}`;

for (const dialect of DIALECTS) {
  describe(`planning model (${dialect})`, { skip: skipUnless(dialect) }, () => {
    const { t, a, b } = suiteWithTenants(dialect);
    const post = (col: string, items: unknown[], token = a.token) =>
      call(t.app, token, 'POST', `/${col}`, { [col]: items });
    const patch = (col: string, items: unknown[], token = a.token) =>
      call(t.app, token, 'PATCH', `/${col}`, { [col]: items });

    it('skills: a unique name; Administrators write, every role reads', async () => {
      const made = await post('skills', [{ name: 'Gas Safe' }, { name: 'Electrical' }]);
      assert.equal(made.status, 200, made.raw);
      assert.deepEqual(errorsOf(await post('skills', [{ name: 'Gas Safe' }])), [code('unique', 'name')]);
      assert.deepEqual(errorsOf(await post('skills', [{}])), [code('required', 'name')]);
      const emp = await addUser(t, a, 'employee');
      const con = await addUser(t, a, 'contractor');
      assert.equal((await post('skills', [{ name: 'X' }], emp.token)).status, 403);
      assert.equal((await call(t.app, con.token, 'GET', '/skills')).body.skills.length, 2);
      // Another account's list is its own.
      assert.equal((await call(t.app, b.token, 'GET', '/skills')).body.skills.length, 0);
    });

    it("users' workingHours: valid intervals kept; every malformed one a failure naming workingHours", async () => {
      const hours = [
        { day: 'mon', start: '08:00', end: '12:00' },
        { day: 'mon', start: '12:00', end: '17:30' },
        { day: 'sat', start: '00:00', end: '23:59' },
      ];
      const made = await post('users', [newUser(a.accountId, { workingHours: hours })]);
      assert.equal(made.status, 200, made.raw);
      assert.deepEqual(made.body.users[0].workingHours, hours);
      const plain = await post('users', [newUser(a.accountId)]);
      assert.deepEqual(plain.body.users[0].workingHours, [], 'default []');
      assert.equal(plain.body.users[0].homeLocation, null);
      assert.deepEqual(plain.body.users[0].skills, []);
      const bad: unknown[] = [
        'mon 8-5',
        [{ day: 'Mon', start: '08:00', end: '12:00' }],
        [{ day: 'mon', start: '24:00', end: '12:00' }],
        [{ day: 'mon', start: '8:00', end: '12:00' }],
        [{ day: 'mon', start: '12:00', end: '12:00' }],
        [{ day: 'mon', start: '13:00', end: '12:00' }],
        [
          { day: 'tue', start: '08:00', end: '12:00' },
          { day: 'tue', start: '11:59', end: '13:00' },
        ],
        [{ day: 'mon', start: '08:00', end: '12:00', note: 'x' }],
        [null],
        Array.from({ length: 15 }, (_, i) => ({
          day: 'wed',
          start: `${String(i).padStart(2, '0')}:00`,
          end: `${String(i).padStart(2, '0')}:30`,
        })),
      ];
      for (const workingHours of bad) {
        const res = await post('users', [newUser(a.accountId, { workingHours })]);
        assert.equal(res.status, 422, JSON.stringify(workingHours));
        assert.deepEqual(errorsOf(res), [code('invalid', 'workingHours')], JSON.stringify(workingHours));
      }
      // 14 intervals is the most.
      const fourteen = Array.from({ length: 14 }, (_, i) => ({
        day: 'thu',
        start: `${String(i).padStart(2, '0')}:00`,
        end: `${String(i).padStart(2, '0')}:30`,
      }));
      assert.equal((await post('users', [newUser(a.accountId, { workingHours: fourteen })])).status, 200);
    });

    it("users' homeLocation and skills; a skill of another account is refused", async () => {
      const [gas] = (await post('skills', [{ name: 'Boilers' }])).body.skills;
      const other = (await post('skills', [{ name: 'Boilers' }], b.token)).body.skills[0];
      const res = await post('users', [
        newUser(a.accountId, { homeLocation: { lat: 53.8, lng: -1.55 }, skills: [{ id: gas.id }] }),
      ]);
      assert.equal(res.status, 200, res.raw);
      const u = res.body.users[0];
      assert.deepEqual(u.homeLocation, { lat: 53.8, lng: -1.55 });
      assert.deepEqual(u.skills, [{ id: gas.id }]);
      const full = await call(t.app, a.token, 'GET', `/users/${u.id}?fields=skills,[*]`);
      assert.deepEqual(full.body.users[0].skills, [{ id: gas.id, name: 'Boilers' }]);
      for (const homeLocation of [{ lat: 91, lng: 0 }, { lat: 1.123456789, lng: 0 }, { lat: 1 }, 'here'])
        assert.deepEqual(
          errorsOf(await patch('users', [{ id: u.id, homeLocation }])),
          [code('invalid', 'homeLocation')],
          JSON.stringify(homeLocation),
        );
      const refused = await patch('users', [{ id: u.id, skills: [{ id: other.id }] }]);
      assert.equal(refused.status, 422, refused.raw);
      // The list is the user's data: its ETag moves with it.
      const before = (await call(t.app, a.token, 'GET', `/users/${u.id}`)).headers.etag;
      assert.equal((await patch('users', [{ id: u.id, skills: [] }])).status, 200);
      const after = await call(t.app, a.token, 'GET', `/users/${u.id}`);
      assert.notEqual(after.headers.etag, before);
      assert.deepEqual(after.body.users[0].skills, []);
    });

    it("jobs' requiredSkills: an Employee sets them (skills are read, not written, by the list)", async () => {
      const [s1] = (await post('skills', [{ name: 'Roofing' }])).body.skills;
      const emp = await addUser(t, a, 'employee');
      const res = await post('jobs', [{ title: 'Roof', requiredSkills: [{ id: s1.id }] }], emp.token);
      assert.equal(res.status, 200, res.raw);
      assert.deepEqual(res.body.jobs[0].requiredSkills, [{ id: s1.id }]);
      // The skill itself does not change with the lists that name it.
      const skill = await call(t.app, a.token, 'GET', `/skills/${s1.id}`);
      assert.equal(skill.body.skills[0].modified, skill.body.skills[0].created);
    });

    it("visits' arrival window: both or neither, end after start, one end against the stored other; locked", async () => {
      const job = (await post('jobs', [{ title: 'Visit job' }])).body.jobs[0].id;
      const base = { job: { id: job }, label: 'V', startTime: '2031-03-01T09:00:00Z', endTime: '2031-03-01T10:00:00Z' };
      const made = await post('visits', [
        { ...base, arrivalWindowStart: '2031-03-01T08:00:00Z', arrivalWindowEnd: '2031-03-01T10:00:00Z', locked: true },
      ]);
      assert.equal(made.status, 200, made.raw);
      const v = made.body.visits[0];
      assert.deepEqual(
        [v.arrivalWindowStart, v.arrivalWindowEnd, v.locked],
        ['2031-03-01T08:00:00.000Z', '2031-03-01T10:00:00.000Z', true],
      );
      assert.deepEqual(errorsOf(await post('visits', [{ ...base, arrivalWindowStart: '2031-03-01T08:00:00Z' }])), [
        code('invalid', 'arrivalWindowStart'),
      ]);
      assert.deepEqual(
        errorsOf(
          await post('visits', [
            { ...base, arrivalWindowStart: '2031-03-01T10:00:00Z', arrivalWindowEnd: '2031-03-01T10:00:00Z' },
          ]),
        ),
        [code('invalid', 'arrivalWindowEnd')],
      );
      assert.deepEqual(errorsOf(await patch('visits', [{ id: v.id, arrivalWindowEnd: '2031-03-01T07:00:00Z' }])), [
        code('invalid', 'arrivalWindowEnd'),
      ]);
      assert.deepEqual(errorsOf(await patch('visits', [{ id: v.id, arrivalWindowStart: null }])), [
        code('invalid', 'arrivalWindowStart'),
      ]);
      const cleared = await patch('visits', [
        { id: v.id, arrivalWindowStart: null, arrivalWindowEnd: null, locked: false },
      ]);
      assert.equal(cleared.status, 200, cleared.raw);
      assert.deepEqual([cleared.body.visits[0].arrivalWindowStart, cleared.body.visits[0].locked], [null, false]);
      const plain = (await post('visits', [base])).body.visits[0];
      assert.deepEqual([plain.arrivalWindowStart, plain.arrivalWindowEnd, plain.locked], [null, null, false]);
    });
  });
}
