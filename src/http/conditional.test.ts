import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { DIALECTS, addUser, suiteWithTenants, call, skipUnless } from '../../test/helpers.js';
import { ifMatchHolds, noneMatchHolds } from '../collections/machinery/etag.js';

test('If-Match compares strongly, If-None-Match weakly; * matches any current item', () => {
  assert.ok(ifMatchHolds('"5.2"', '"5.2"'));
  assert.ok(ifMatchHolds('"5.1", "5.2"', '"5.2"'));
  assert.ok(ifMatchHolds('*', '"5.2"'));
  assert.ok(!ifMatchHolds('W/"5.2"', '"5.2"'));
  assert.ok(!ifMatchHolds('"5.1"', '"5.2"'));
  assert.ok(!ifMatchHolds('5.2', '"5.2"'));
  assert.ok(noneMatchHolds('W/"5.2"', '"5.2"'));
  assert.ok(noneMatchHolds('"1.1", "5.2"', '"5.2"'));
  assert.ok(!noneMatchHolds('"5.1"', '"5.2"'));
  assert.ok(!noneMatchHolds(undefined, '"5.2"'));
});

for (const dialect of DIALECTS) {
  describe(`conditional requests: ETag, If-None-Match, If-Match (${dialect})`, { skip: skipUnless(dialect) }, () => {
    const { t, a, b } = suiteWithTenants(dialect);

    const newJob = async (extra: Record<string, unknown> = {}) =>
      (await call(t.app, a.token, 'POST', '/jobs', { jobs: [{ title: 'Fix the boiler', ...extra }] })).body.jobs[0]
        .id as number;
    const etag = async (collection: string, id: number, token = a.token) => {
      const res = await call(t.app, token, 'GET', `/${collection}/${id}`);
      assert.equal(res.status, 200);
      return res.headers.etag as string;
    };
    const title = async (id: number) => (await call(t.app, a.token, 'GET', `/jobs/${id}`)).body.jobs[0].title as string;

    test('GET /jobs/:id has a strong ETag; If-None-Match with it is 304 without a body; a change changes it', async () => {
      const id = await newJob();
      const tag = await etag('jobs', id);
      assert.match(tag, /^"[^"]+"$/);
      assert.equal(await etag('jobs', id), tag);
      // Another representation (fields) of the same item: the same ETag, so PATCH can check it.
      assert.equal((await call(t.app, a.token, 'GET', `/jobs/${id}?fields=*`)).headers.etag, tag);
      const notModified = await call(t.app, a.token, 'GET', `/jobs/${id}`, undefined, { 'if-none-match': tag });
      assert.equal(notModified.status, 304);
      assert.equal(notModified.raw, '');
      assert.equal(notModified.headers.etag, tag);
      assert.equal(
        (await call(t.app, a.token, 'GET', `/jobs/${id}`, undefined, { 'if-none-match': `W/${tag}` })).status,
        304,
      );
      await call(t.app, a.token, 'PATCH', `/jobs/${id}`, { jobs: [{ title: 'Fix it again' }] });
      const changed = await call(t.app, a.token, 'GET', `/jobs/${id}`, undefined, { 'if-none-match': tag });
      assert.equal(changed.status, 200);
      assert.notEqual(changed.headers.etag, tag);
      assert.equal(changed.body.jobs[0].title, 'Fix it again');
      // Another account's item stays a 404, whatever the conditional headers.
      assert.equal((await call(t.app, b.token, 'GET', `/jobs/${id}`, undefined, { 'if-none-match': '*' })).status, 404);
    });

    test('PATCH /jobs/:id answers with the new ETag, the one GET then shows', async () => {
      const id = await newJob();
      const before = await etag('jobs', id);
      const patched = await call(
        t.app,
        a.token,
        'PATCH',
        `/jobs/${id}`,
        { jobs: [{ title: 'Patched' }] },
        { 'if-match': before },
      );
      assert.equal(patched.status, 200);
      assert.ok(patched.headers.etag);
      assert.notEqual(patched.headers.etag, before);
      assert.equal(patched.headers.etag, await etag('jobs', id));
      // The kept answer of a repeat carries it too.
      const again = await call(
        t.app,
        a.token,
        'PATCH',
        `/jobs/${id}`,
        { jobs: [{ title: 'Keyed' }] },
        { 'idempotency-key': `etag-${id}` },
      );
      const replay = await call(
        t.app,
        a.token,
        'PATCH',
        `/jobs/${id}`,
        { jobs: [{ title: 'Keyed' }] },
        { 'idempotency-key': `etag-${id}` },
      );
      assert.equal(replay.headers['idempotency-replayed'], 'true');
      assert.equal(replay.headers.etag, again.headers.etag);
    });

    test('a stale If-Match on PATCH or DELETE is 412 (1080) and changes nothing; a current one, or *, passes', async () => {
      const id = await newJob();
      const stale = await etag('jobs', id);
      await call(t.app, a.token, 'PATCH', `/jobs/${id}`, { jobs: [{ title: 'Changed by the office' }] });
      const refused = await call(
        t.app,
        a.token,
        'PATCH',
        `/jobs/${id}`,
        { jobs: [{ title: 'Changed in the field' }] },
        { 'if-match': stale },
      );
      assert.equal(refused.status, 412);
      assert.equal(refused.body.error.code, 1080);
      assert.equal(await title(id), 'Changed by the office');
      const weak = await call(
        t.app,
        a.token,
        'PATCH',
        `/jobs/${id}`,
        { jobs: [{ title: 'Weak' }] },
        { 'if-match': `W/${await etag('jobs', id)}` },
      );
      assert.equal(weak.status, 412);
      const deleteRefused = await call(t.app, a.token, 'DELETE', `/jobs/${id}`, undefined, { 'if-match': stale });
      assert.equal(deleteRefused.status, 412);
      assert.equal((await call(t.app, a.token, 'GET', `/jobs/${id}`)).status, 200);
      const current = await etag('jobs', id);
      assert.equal(
        (
          await call(
            t.app,
            a.token,
            'PATCH',
            `/jobs/${id}`,
            { jobs: [{ title: 'Agreed' }] },
            { 'if-match': `"0.0", ${current}` },
          )
        ).status,
        200,
      );
      assert.equal(
        (await call(t.app, a.token, 'PATCH', `/jobs/${id}`, { jobs: [{ title: 'Any' }] }, { 'if-match': '*' })).status,
        200,
      );
      const deleted = await call(t.app, a.token, 'DELETE', `/jobs/${id}`, undefined, {
        'if-match': await etag('jobs', id),
      });
      assert.equal(deleted.status, 200);
      assert.equal((await call(t.app, a.token, 'GET', `/jobs/${id}`)).status, 404);
    });

    test('If-Match on a collection URL or an action, which have no ETag: 412 (1080) unless *, and nothing changes', async () => {
      const id = await newJob();
      const tag = await etag('jobs', id);
      const events = async () =>
        Number(
          (
            await t.database.db
              .selectFrom('events')
              .select((eb) => eb.fn.countAll().as('n'))
              .where('account_id', '=', a.accountId)
              .executeTakeFirstOrThrow()
          ).n,
        );
      const before = await events();
      const jobs = async () => (await call(t.app, a.token, 'GET', '/jobs?recordsPerPage=1')).body.metadata.recordsCount;
      const count = await jobs();
      // The item's own, current ETag does not make a collection write conditional on it.
      for (const ifMatch of [tag, `W/${tag}`, '"0.0"', 'garbage', `"0.0", ${tag}`]) {
        const patch = await call(
          t.app,
          a.token,
          'PATCH',
          '/jobs',
          { jobs: [{ id, title: 'Bulk' }] },
          { 'if-match': ifMatch },
        );
        assert.equal(patch.status, 412, `${ifMatch}: ${patch.raw}`);
        assert.equal(patch.body.error.code, 1080);
        assert.match(patch.body.error.message, /\/jobs has no entity tag/);
        const del = await call(t.app, a.token, 'DELETE', '/jobs', { jobs: [{ id }] }, { 'if-match': ifMatch });
        assert.equal(del.status, 412, del.raw);
        const post = await call(t.app, a.token, 'POST', '/jobs', { jobs: [{ title: 'New' }] }, { 'if-match': ifMatch });
        assert.equal(post.status, 412, post.raw);
      }
      assert.equal(await title(id), 'Fix the boiler');
      assert.equal(await etag('jobs', id), tag);
      assert.equal(await jobs(), count);
      assert.equal(await events(), before, 'no event: nothing was committed');
      // `*`: the collection exists, so the write goes ahead.
      const star = await call(t.app, a.token, 'PATCH', '/jobs', { jobs: [{ id, title: 'Bulk' }] }, { 'if-match': '*' });
      assert.equal(star.status, 200, star.raw);
      assert.equal(await title(id), 'Bulk');
      assert.equal(
        (await call(t.app, a.token, 'DELETE', '/jobs', { jobs: [{ id }] }, { 'if-match': '*' })).status,
        200,
      );

      // An action, on an item or not: the same rule.
      const hook = await call(t.app, a.token, 'POST', '/webhooks', {
        webhooks: [{ url: 'https://hooks.example.com/conditional', events: ['*'] }],
      });
      const hookId = hook.body.webhooks[0].id as number;
      const secret = () =>
        t.database.db.selectFrom('webhooks').select('secret').where('id', '=', hookId).executeTakeFirstOrThrow();
      const kept = await secret();
      const hookTag = await etag('webhooks', hookId);
      const rotate = await call(t.app, a.token, 'POST', `/webhooks/${hookId}/rotateSecret`, undefined, {
        'if-match': hookTag,
      });
      assert.equal(rotate.status, 412, rotate.raw);
      assert.equal(rotate.body.error.code, 1080);
      assert.deepEqual(await secret(), kept);
      const ping = await call(t.app, a.token, 'POST', `/webhooks/${hookId}/ping`, undefined, { 'if-match': '"1.1"' });
      assert.equal(ping.status, 412, ping.raw);
      const pings = await t.database.db
        .selectFrom('deliveries')
        .select('id')
        .where('webhook_id', '=', hookId)
        .where('type', '=', 'webhook.ping')
        .execute();
      assert.deepEqual(pings, [], 'no ping queued');
      const rotated = await call(t.app, a.token, 'POST', `/webhooks/${hookId}/rotateSecret`, undefined, {
        'if-match': '*',
      });
      assert.equal(rotated.status, 200, rotated.raw);
      assert.notDeepEqual(await secret(), kept);
      await call(t.app, a.token, 'DELETE', `/webhooks/${hookId}`);
    });

    test('changes the item did not make itself change its ETag: SET NULL, a rule on other rows, list membership', async () => {
      // ON DELETE SET NULL: deleting the client empties the job's client.
      const client = (await call(t.app, a.token, 'POST', '/clients', { clients: [{ name: 'Mrs Smith' }] })).body
        .clients[0].id as number;
      const id = await newJob({ client: { id: client } });
      const withClient = await etag('jobs', id);
      assert.equal((await call(t.app, a.token, 'DELETE', `/clients/${client}`)).status, 200);
      assert.equal((await call(t.app, a.token, 'GET', `/jobs/${id}`)).body.jobs[0].client, null);
      assert.notEqual(await etag('jobs', id), withClient);
      assert.equal(
        (await call(t.app, a.token, 'PATCH', `/jobs/${id}`, { jobs: [{ title: 'x' }] }, { 'if-match': withClient }))
          .status,
        412,
      );
      // A rule changing another row: a new default status clears the old default.
      const statuses = (await call(t.app, a.token, 'GET', '/statuses?fields=isDefault')).body.statuses as {
        id: number;
        isDefault: boolean;
      }[];
      const oldDefault = statuses.find((s) => s.isDefault)!.id;
      const oldTag = await etag('statuses', oldDefault);
      const created = await call(t.app, a.token, 'POST', '/statuses', {
        statuses: [{ label: 'Brand new default', isDefault: true }],
      });
      assert.equal(created.status, 200, created.raw);
      assert.notEqual(await etag('statuses', oldDefault), oldTag);
      // List membership: adding a user to a workgroup changes the workgroup (its users list).
      const group = (await call(t.app, a.token, 'POST', '/workgroups', { workgroups: [{ name: 'Night shift' }] })).body
        .workgroups[0].id as number;
      const groupTag = await etag('workgroups', group);
      const user = await addUser(t, a);
      const userTag = await etag('users', user.id);
      assert.equal(
        (await call(t.app, a.token, 'PATCH', `/users/${user.id}`, { users: [{ workgroups: [{ id: group }] }] })).status,
        200,
      );
      assert.notEqual(await etag('workgroups', group), groupTag);
      assert.notEqual(await etag('users', user.id), userTag);
    });

    test('two PATCHes racing with the same If-Match: one 200, one 412', async () => {
      for (let round = 0; round < 4; round++) {
        const id = await newJob();
        const tag = await etag('jobs', id);
        const answers = await Promise.all(
          ['first', 'second'].map((who) =>
            call(t.app, a.token, 'PATCH', `/jobs/${id}`, { jobs: [{ title: `by ${who}` }] }, { 'if-match': tag }),
          ),
        );
        assert.deepEqual(answers.map((r) => r.status).sort(), [200, 412], answers.map((r) => r.raw).join(' | '));
        const winner = answers.find((r) => r.status === 200)!;
        assert.equal(await title(id), winner.body.jobs[0].title);
      }
    });
  });
}
