import { before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { registry } from '../src/collections/index.js';
import { DIALECTS, addUser, suiteWithTenants, call, skipUnless } from './helpers.js';
import { conformanceFor } from './openapi-conformance.js';

/**
 * The served /openapi.json describes the answers exactly. Every response the HTTP tests receive is
 * checked by the wrapper createTestApp puts around app.inject (test/openapi-conformance.ts); these
 * tests make sure the checker itself bites, and read every collection in full.
 */
for (const dialect of DIALECTS) {
  describe(`answers match /openapi.json (${dialect})`, { skip: skipUnless(dialect) }, () => {
    const { t, a } = suiteWithTenants(dialect);
    let doc: string;
    before(async () => {
      doc = (await t.app.inject({ method: 'GET', url: '/openapi.json' })).body;
    });

    it('every collection read in full (fields=*,[*]) matches its schema, null members included', async () => {
      const u = await addUser(t, a);
      const job = await call(t.app, a.token, 'POST', '/jobs', { jobs: [{ title: 'Boiler' }] });
      assert.equal(job.status, 200, job.raw);
      await call(t.app, a.token, 'POST', '/visits', {
        visits: [
          {
            job: { id: job.body.jobs[0].id },
            user: { id: u.id },
            label: 'v',
            startTime: '2024-05-01T09:00:00Z',
            endTime: '2024-05-01T10:00:00Z',
          },
        ],
      });
      await call(t.app, a.token, 'POST', '/workgroups', { workgroups: [{ name: 'Crew', users: [{ id: u.id }] }] });
      for (const c of registry.list) {
        for (const q of ['', '?fields=*', '?fields=*,[*]']) {
          const res = await call(t.app, a.token, 'GET', `/${c.name}${q}`);
          assert.equal(res.status, 200, res.raw);
        }
      }
      const user = await call(t.app, a.token, 'GET', `/users/${u.id}?fields=*,[*]`);
      assert.equal(user.body.users[0].account.companyAccountCode, null);
      const full = await call(t.app, a.token, 'GET', `/jobs/${job.body.jobs[0].id}?fields=*,[*]`);
      assert.equal(typeof full.body.jobs[0].status.isDefault, 'boolean');
    });

    it('the checker refuses a wrong type, an undeclared status, a missing header and a 405 without Allow', () => {
      const c = conformanceFor(doc);
      const headers = {
        'content-type': 'application/json;charset=UTF-8',
        'cache-control': 'no-store',
        pragma: 'no-cache',
        'x-version': '1.0',
      };
      const user = { id: 1, firstName: 'a', lastName: 'b', account: { id: 1, companyAccountCode: null } };
      const ok = {
        method: 'GET',
        url: '/users/1?fields=firstName,lastName,account',
        requestHeaders: {},
        status: 200,
        headers,
        body: JSON.stringify({
          result: 'success',
          users: [user],
          metadata: { page: 1, pagesCount: 1, recordsPerPage: 50, recordsCount: 1 },
        }),
      };
      c.check(ok);
      assert.throws(
        () => c.check({ ...ok, body: ok.body.replace('"firstName":"a"', '"firstName":1') }),
        /firstName must be string/,
      );
      assert.throws(() => c.check({ ...ok, status: 418 }), /status 418 is not declared/);
      // Without `fields` every default field must be there (the <Collection>Default schema).
      assert.throws(
        () => c.check({ ...ok, url: '/users/1' }),
        /item 0 without fields does not match \/components\/schemas\/UsersDefault: .*required property 'mobile'/,
      );
      assert.throws(() => c.check({ ...ok, headers: { ...headers, pragma: undefined } as never }), /header pragma/);
      const notAllowed = {
        ...ok,
        method: 'PUT',
        status: 405,
        body: JSON.stringify({ result: 'error', error: { type: 'client', code: 1050, message: 'x' } }),
      };
      assert.throws(() => c.check(notAllowed), /405 without Allow/);
      c.check({ ...notAllowed, headers: { ...headers, allow: 'GET' } });
      // X-Method decides the operation.
      assert.throws(
        () => c.check({ ...ok, method: 'POST', requestHeaders: { 'x-method': 'GET' }, body: '{}' }),
        /must have required property/,
      );
    });

    it('GET /events declares the live stream: its media type, Last-Event-ID, the 400 and the 429', () => {
      const c = conformanceFor(doc);
      const stream = {
        method: 'GET',
        url: '/events',
        requestHeaders: { accept: 'text/event-stream' },
        status: 200,
        headers: { 'content-type': 'text/event-stream; charset=utf-8', 'x-version': '1.0' },
        body: ': stream open\n\nid: 7\nevent: jobs.created\ndata: {"id":7}\n\n',
      };
      c.check(stream);
      assert.throws(
        () => c.check({ ...stream, url: '/users' }),
        /content type text\/event-stream; charset=utf-8 is not declared/,
      );
      const parsed = JSON.parse(doc);
      const op = parsed.paths['/events'].get;
      assert.ok(op.parameters.some((p: { $ref?: string }) => p.$ref === '#/components/parameters/LastEventId'));
      assert.equal(parsed.components.parameters.LastEventId.name, 'Last-Event-ID');
      for (const words of [/id: 1234\nevent: jobs\.created\ndata: /, /: heartbeat/, /400 \(1002\)/, /429 \(1429/])
        assert.match(op.description, words);
      assert.ok(op.responses[400] && op.responses[429]);
    });
  });
}
