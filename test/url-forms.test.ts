import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { DIALECTS, suiteWithTenants, call, skipUnless } from './helpers.js';

/**
 * Spec §4.1: `/:collection[/:item][/:action]` with letters, digits, letters. A URL not of that form
 * (and no page of the app) is 404 1033; an unknown action is 404 1032 whatever the method; a
 * method a URL does not take is 405, and every 405 carries `Allow`.
 */
for (const dialect of DIALECTS) {
  describe(`URL forms and methods (${dialect})`, { skip: skipUnless(dialect) }, () => {
    const { t, a } = suiteWithTenants(dialect);

    it('GET /users/abc is an unknown action (404), not a 405', async () => {
      for (const [method, url] of [
        ['GET', '/users/abc'],
        ['PATCH', '/users/abc'],
        ['DELETE', '/users/1/abc'],
        ['POST', '/users/abc'],
      ]) {
        const res = await call(t.app, a.token, method, url);
        assert.equal(res.status, 404, `${method} ${url}: ${res.raw}`);
        assert.equal(res.body.error.code, 1032);
        assert.match(res.body.error.message, /numeric id, as in \/users\/123/);
      }
    });

    it('URLs not of the form are 404 1033 and say what the form is', async () => {
      for (const url of [
        '/users/1/2',
        '/users/1x',
        '/users/abc/def',
        '/us-ers',
        '/users/1/abc/def',
        '/1',
        '/users//1',
      ]) {
        for (const method of ['GET', 'PUT', 'TRACE']) {
          const res = await call(t.app, a.token, method, url);
          assert.equal(res.status, 404, `${method} ${url}: ${res.raw}`);
          assert.equal(res.body.error.code, 1033);
          assert.match(res.body.error.message, /\/:collection\[\/:item\]\[\/:action\]/);
        }
      }
    });

    it('every 405 carries Allow, and the message lists it too', async () => {
      const cases: [string, string, string][] = [
        ['PUT', '/users', 'GET, POST, PATCH, DELETE'],
        ['PUT', '/users/1', 'GET, PATCH, DELETE'],
        ['POST', '/users/1', 'GET, PATCH, DELETE'],
        ['TRACE', '/users', 'GET, POST, PATCH, DELETE'],
        ['OPTIONS', '/jobs/3', 'GET, PATCH, DELETE'],
        ['GET', '/files/upload', 'POST'],
        ['PUT', '/files/upload', 'POST'],
        ['POST', '/files', 'GET, PATCH, DELETE'],
        ['GET', '/oauth2/token', 'POST'],
        ['PUT', '/oauth2/token', 'POST'],
        ['DELETE', '/oauth2/code', 'GET'],
        ['PUT', '/openapi.json', 'GET'],
        ['POST', '/docs', 'GET'],
        ['PUT', '/file-downloads/1/2', 'GET'],
      ];
      for (const [method, url, allow] of cases) {
        const res = await call(
          t.app,
          a.token,
          method,
          url,
          method === 'POST' && url === '/files' ? { files: [{ name: 'x' }] } : undefined,
        );
        assert.equal(res.status, 405, `${method} ${url}: ${res.raw}`);
        assert.equal(res.headers.allow, allow, `${method} ${url}`);
        assert.equal(res.body.error.code, 1050);
        assert.match(res.body.error.message, new RegExp(`allowed(?: here)?: ${allow}`));
      }
      const head = await call(t.app, a.token, 'HEAD', '/users');
      assert.equal(head.status, 405);
      assert.equal(head.headers.allow, 'GET, POST, PATCH, DELETE');
    });
  });
}
