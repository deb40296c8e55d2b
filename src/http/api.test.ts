import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { DIALECTS, call, suiteWithTenants, newUser, skipUnless } from '../../test/helpers.js';

const STANDARD = {
  'content-type': 'application/json;charset=UTF-8',
  'cache-control': 'no-store',
  pragma: 'no-cache',
  'x-version': '1.0',
};

function assertStandardHeaders(headers: Record<string, unknown>) {
  for (const [k, v] of Object.entries(STANDARD)) assert.equal(headers[k], v, `header ${k}`);
}

for (const dialect of DIALECTS) {
  describe(`API machinery (${dialect})`, { skip: skipUnless(dialect) }, () => {
    const { t, a } = suiteWithTenants(dialect);

    test('every response carries the four headers, errors and 404s included', async () => {
      const cases = [
        await call(t.app, a.token, 'GET', '/users'),
        await call(t.app, a.token, 'GET', '/nothing'),
        await call(t.app, a.token, 'GET', '/users/999999'),
        await call(t.app, undefined, 'GET', '/users'),
        await call(t.app, a.token, 'GET', '/users', undefined, { 'x-version': '' }),
        await call(t.app, a.token, 'GET', '/a/b/c/d'),
        await call(t.app, a.token, 'PUT', '/users'),
        await call(t.app, a.token, 'POST', '/users', '{bad json'),
      ];
      for (const r of cases) {
        assertStandardHeaders(r.headers);
        assert.ok(['success', 'error', 'failure'].includes(r.body.result), r.raw);
      }
      assert.deepEqual(
        cases.map((r) => r.status),
        [200, 404, 404, 401, 400, 404, 405, 400],
      );
    });

    test('X-Version is required and must be 1.0', async () => {
      const missing = await call(t.app, a.token, 'GET', '/users', undefined, { 'x-version': '' });
      assert.equal(missing.status, 400);
      assert.equal(missing.body.error.code, 1003);
      const wrong = await call(t.app, a.token, 'GET', '/users', undefined, { 'x-version': '0.9' });
      assert.equal(wrong.status, 400);
      assert.equal(wrong.body.error.code, 1004);
      assert.equal(wrong.headers['x-version'], '1.0');
    });

    test('bearer token: missing, malformed, unknown, expired', async () => {
      const none = await call(t.app, undefined, 'GET', '/users');
      assert.equal(none.status, 401);
      assert.equal(none.body.error.code, 1010);
      assert.match(String(none.headers['www-authenticate']), /^Bearer/);
      const malformed = await call(t.app, undefined, 'GET', '/users', undefined, { authorization: 'Basic abc' });
      assert.equal(malformed.status, 401);
      assert.match(String(malformed.headers['www-authenticate']), /error="invalid_token"/);
      const unknown = await call(t.app, 'x'.repeat(43), 'GET', '/users');
      assert.equal(unknown.status, 401);
      assert.equal(unknown.body.error.code, 1011);
      const saved = t.clock.now;
      t.clock.now += 3601 * 1000;
      const expired = await call(t.app, a.token, 'GET', '/users');
      t.clock.now = saved;
      assert.equal(expired.status, 401);
      assert.equal((await call(t.app, a.token, 'GET', '/users')).status, 200);
    });

    test('permissions: read and write are separate', async () => {
      const readOnly = await a.tokenFor(a.adminId, ['users.read']);
      assert.equal((await call(t.app, readOnly, 'GET', '/users')).status, 200);
      const w = await call(t.app, readOnly, 'POST', '/users', { users: [newUser(a.accountId)] });
      assert.equal(w.status, 403);
      assert.equal(w.body.error.code, 1020);
      const none = await a.tokenFor(a.adminId, ['jobs.read']);
      assert.equal((await call(t.app, none, 'GET', '/users')).status, 403);
    });

    test('URL forms and method rules (spec 4.1, 4.2) with Allow', async () => {
      const postItem = await call(t.app, a.token, 'POST', `/users/${a.adminId}`, { users: [] });
      assert.equal(postItem.status, 405);
      assert.equal(postItem.headers.allow, 'GET, PATCH, DELETE');
      // An action that exists takes POST only; one that does not is missing whatever the method.
      for (const m of ['GET', 'PATCH', 'DELETE']) {
        const r = await call(t.app, a.token, m, '/files/upload');
        assert.equal(r.status, 405, m);
        assert.equal(r.headers.allow, 'POST');
        const unknownAction = await call(t.app, a.token, m, '/users/1/someaction');
        assert.equal(unknownAction.status, 404, m);
        assert.equal(unknownAction.body.error.code, 1032);
      }
      const unknownAction = await call(t.app, a.token, 'POST', '/users/frobnicate', { users: [] });
      assert.equal(unknownAction.status, 404);
      assert.equal(unknownAction.body.error.code, 1032);
      const unknown = await call(t.app, a.token, 'GET', '/widgets');
      assert.equal(unknown.status, 404);
      assert.equal(unknown.body.error.code, 1030);
      const nested = await call(t.app, a.token, 'GET', '/jobs/1/visits/2');
      assert.equal(nested.status, 404);
      const put = await call(t.app, a.token, 'PUT', '/users', { users: [] });
      assert.equal(put.status, 405);
      assert.equal(put.headers.allow, 'GET, POST, PATCH, DELETE');
    });

    test('X-Method replaces the HTTP method', async () => {
      const asGet = await call(
        t.app,
        a.token,
        'PATCH',
        '/users',
        { users: [{ id: a.adminId, firstName: 'Nope' }] },
        { 'x-method': 'GET' },
      );
      assert.equal(asGet.status, 200);
      assert.equal(asGet.body.metadata.page, 1);
      const postAsPatch = await call(
        t.app,
        a.token,
        'POST',
        '/users',
        { users: [{ id: a.adminId, companyName: 'Via POST' }] },
        { 'x-method': 'PATCH' },
      );
      assert.equal(postAsPatch.status, 200);
      assert.equal(postAsPatch.body.users[0].companyName, 'Via POST');
      const bad = await call(t.app, a.token, 'POST', '/users', { users: [] }, { 'x-method': 'TRACE' });
      assert.equal(bad.status, 400);
      assert.equal(bad.body.error.code, 1005);
    });

    test('bodies: malformed JSON, wrong content type, wrong collection, not an array, too large, too many items', async () => {
      const malformed = await call(t.app, a.token, 'POST', '/users', '{"users": [');
      assert.equal(malformed.status, 400);
      assert.equal(malformed.body.error.code, 1001);
      const text = await call(t.app, a.token, 'POST', '/users', 'users', { 'content-type': 'text/plain' });
      assert.equal(text.status, 415);
      assert.equal(text.body.error.code, 1070);
      const wrong = await call(t.app, a.token, 'POST', '/users', { jobs: [{ title: 'x' }] });
      assert.equal(wrong.status, 422);
      assert.equal(wrong.body.error.code, 1247);
      assert.equal(wrong.body.error.type, 'content');
      assert.match(wrong.body.error.message, /jobs/);
      const notArray = await call(t.app, a.token, 'POST', '/users', { users: {} });
      assert.equal(notArray.status, 422);
      assert.equal(notArray.body.error.code, 1248);
      const big = await call(t.app, a.token, 'POST', '/users', {
        users: [{ firstName: 'x'.repeat(1024 * 1024 + 10) }],
      });
      assert.equal(big.status, 413);
      assert.equal(big.body.error.code, 1060);
      const many = await call(t.app, a.token, 'POST', '/users', {
        users: Array.from({ length: 101 }, () => newUser(a.accountId)),
      });
      assert.equal(many.status, 413);
      assert.equal(many.body.error.code, 1061);
      assert.equal((await call(t.app, a.token, 'GET', '/users')).body.metadata.recordsCount, 1, 'nothing was saved');
    });

    test('errors never reveal internals', async () => {
      const r = await call(t.app, a.token, 'GET', `/users?where=${encodeURIComponent("firstName ~ 'x' and (")}`);
      assert.equal(r.status, 400);
      assert.doesNotMatch(r.raw, /select|sqlite|postgres|\bat\s+\S+\.js/i);
    });
  });
}
