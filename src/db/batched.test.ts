import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  DIALECTS,
  addUser,
  call,
  createTenant,
  createTestApp,
  skipUnless,
  type Tenant,
  type TestApp,
} from '../../test/helpers.js';
import { readShared, type SharedRead } from './batched.js';

/**
 * Reads by id shared by the requests of a moment (batched.ts): `GET /<collection>/ID` and the
 * revocation epochs. Each request gets its own row and only its own account's, however many ask at
 * once; they share statements (on both databases), never one sent before they asked (that a
 * request asking while a statement is on its way waits for the next: src/auth/epochs.test.ts).
 */
for (const dialect of DIALECTS) {
  describe(`reads shared by concurrent requests (${dialect})`, { skip: skipUnless(dialect) }, () => {
    let t: TestApp;
    let a: Tenant;
    let b: Tenant;
    const aUsers: number[] = [];
    const bUsers: number[] = [];
    let sent: string[] = [];
    const itemReads = () =>
      sent.filter((s) => /from "users" where \(?"users"."account_id" = (\$1|\?) and "users"."id" in \(/.test(s));
    before(async () => {
      t = await createTestApp(dialect, { deliveries: false, observe: (_d, _s, _f, text) => void sent.push(text) });
      a = await createTenant(t, 'Alpha');
      b = await createTenant(t, 'Beta');
      for (let i = 0; i < 40; i++) aUsers.push((await addUser(t, a, 'employee', { firstName: `A${i}` })).id);
      for (let i = 0; i < 3; i++) bUsers.push((await addUser(t, b, 'employee', { firstName: `B${i}` })).id);
    });
    after(() => t?.close());

    test('many items asked at once: each answer is its own item, in its own account only', async () => {
      sent = [];
      const asks = [
        // 40 ids of A (more than one statement's 32), some twice
        ...aUsers.map((id) => ({ token: a.token, id, want: 200 })),
        ...aUsers.slice(0, 5).map((id) => ({ token: a.token, id, want: 200 })),
        // B asks for its own and for A's in the same moment: A's are not B's to see
        ...bUsers.map((id) => ({ token: b.token, id, want: 200 })),
        ...aUsers.slice(0, 4).map((id) => ({ token: b.token, id, want: 404 })),
        // and A for B's, and for an id nobody has
        ...bUsers.map((id) => ({ token: a.token, id, want: 404 })),
        { token: a.token, id: 2_000_000_000, want: 404 },
      ];
      const answers = await Promise.all(asks.map((q) => call(t.app, q.token, 'GET', `/users/${q.id}`)));
      answers.forEach((res, i) => {
        const q = asks[i];
        assert.equal(res.status, q.want, `${q.id} for ${q.token === a.token ? 'A' : 'B'}: ${res.raw}`);
        if (q.want === 200) {
          assert.equal(res.body.users.length, 1);
          assert.equal(res.body.users[0].id, q.id);
          assert.match(res.body.users[0].firstName, q.token === a.token ? /^A\d+$/ : /^B\d+$/);
          assert.match(String(res.headers.etag), new RegExp(`^"${q.id}\\.`));
        } else assert.equal(res.body.error.code, 1031, res.raw);
      });
      // 56 requests: statements shared (every statement reads one account's rows).
      const reads = itemReads();
      assert.ok(reads.length >= 3 && reads.length < 20, `${reads.length} item statements`);
      for (const s of reads) {
        const ids = (/"users"."id" in \(([^)]*)\)/.exec(s)?.[1] ?? '').split(',').length;
        assert.ok([1, 2, 4, 8, 16, 32].includes(ids), `${ids} ids: ${s}`);
      }
    });

    test('an item changed before it is asked is answered changed, however many ask around it', async () => {
      const id = aUsers[7];
      const reads = Array.from({ length: 10 }, () => call(t.app, a.token, 'GET', `/users/${id}`));
      const patched = await call(t.app, a.token, 'PATCH', `/users/${id}`, { users: [{ firstName: 'Changed' }] });
      assert.equal(patched.status, 200, patched.raw);
      const after = await Promise.all(Array.from({ length: 10 }, () => call(t.app, a.token, 'GET', `/users/${id}`)));
      await Promise.all(reads);
      for (const res of after) {
        assert.equal(res.body.users[0].firstName, 'Changed');
        assert.equal(res.headers.etag, patched.headers.etag);
      }
    });

    test("items' lists asked at once: each item its own list (an empty one too), read by shared statements", async () => {
      const skill = async (token: string, name: string) =>
        (await call(t.app, token, 'POST', '/skills', { skills: [{ name }] })).body.skills[0].id as number;
      const [s1, s2, s3] = [await skill(a.token, 'Gas'), await skill(a.token, 'Roof'), await skill(a.token, 'Water')];
      const sb = await skill(b.token, 'Electric');
      const lists = [[s3, s1], [s2], [], [s1, s2, s3]];
      const jobs: { token: string; id: number; want: number[] }[] = [];
      for (let i = 0; i < 24; i++) {
        const want = lists[i % lists.length];
        const res = await call(t.app, a.token, 'POST', '/jobs', {
          jobs: [{ title: `L${i}`, requiredSkills: want.map((id) => ({ id })) }],
        });
        assert.equal(res.status, 200, res.raw);
        jobs.push({ token: a.token, id: res.body.jobs[0].id, want: [...want].sort((x, y) => x - y) });
      }
      const bJob = await call(t.app, b.token, 'POST', '/jobs', {
        jobs: [{ title: 'B', requiredSkills: [{ id: sb }] }],
      });
      jobs.push({ token: b.token, id: bJob.body.jobs[0].id, want: [sb] });
      sent = [];
      const answers = await Promise.all(jobs.map((j) => call(t.app, j.token, 'GET', `/jobs/${j.id}`)));
      answers.forEach((res, i) => {
        assert.equal(res.status, 200, res.raw);
        assert.deepEqual(
          res.body.jobs[0].requiredSkills.map((r: { id: number }) => r.id),
          jobs[i].want,
          `job ${jobs[i].id}`,
        );
      });
      const listReads = sent.filter((q) => /from "job_skills" as "l"/.test(q));
      assert.ok(listReads.length >= 2 && listReads.length < jobs.length, `${listReads.length} list statements`);
    });

    if (dialect === 'postgres')
      test('a failed statement fails the requests that shared it, and the next statement is sent', async () => {
        const db = t.database.db;
        const read: SharedRead<{ id: number }> = {
          key: 'test failing',
          values: {},
          build: (ids) => db.selectFrom('accounts').select('id').where('id', 'in', ids) as never,
          idOf: (r) => Number(r.id),
        };
        // An id out of the column's range: PostgreSQL refuses the statement, for both who shared it.
        const [bad, good] = await Promise.allSettled([
          readShared(db, read, 2 ** 70),
          readShared(db, read, a.accountId),
        ]);
        assert.equal(bad.status, 'rejected');
        assert.equal(good.status, 'rejected');
        assert.equal((await readShared(db, read, a.accountId))?.id, a.accountId);
      });
  });
}
