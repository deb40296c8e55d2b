import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { DIALECTS, call, suiteWithTenants, skipUnless } from '../../test/helpers.js';

/** Security headers on every JSON answer, without touching the spec's four (§1.7). */
for (const dialect of DIALECTS) {
  describe(`security headers (${dialect})`, { skip: skipUnless(dialect) }, () => {
    const { t, a } = suiteWithTenants(dialect);

    test('success, errors and 404s carry them next to the four spec headers', async () => {
      const answers = [
        await call(t.app, a.token, 'GET', '/users'),
        await call(t.app, undefined, 'GET', '/users'),
        await call(t.app, a.token, 'GET', '/nothing/here/at/all'),
        await call(t.app, a.token, 'POST', '/users', '{"users": [', {}),
      ];
      assert.deepEqual(
        answers.map((r) => r.status),
        [200, 401, 404, 400],
      );
      for (const r of answers) {
        assert.equal(r.headers['content-type'], 'application/json;charset=UTF-8');
        assert.equal(r.headers['cache-control'], 'no-store');
        assert.equal(r.headers['pragma'], 'no-cache');
        assert.equal(r.headers['x-version'], '1.0');
        assert.equal(r.headers['x-content-type-options'], 'nosniff');
        assert.equal(r.headers['content-security-policy'], "default-src 'none'; frame-ancestors 'none'");
        assert.equal(r.headers['x-frame-options'], 'DENY');
        assert.equal(r.headers['referrer-policy'], 'no-referrer');
        assert.equal(r.headers['strict-transport-security'], undefined, 'HSTS only with an https PUBLIC_URL');
        assert.equal(r.headers['x-powered-by'], undefined);
      }
    });

    test('HTML pages of the authorization server keep their own policy', async () => {
      const page = await t.app.inject({ method: 'GET', url: '/oauth2/code?response_type=code&client_id=unknown' });
      if (String(page.headers['content-type']).startsWith('text/html')) {
        assert.notEqual(page.headers['content-security-policy'], "default-src 'none'; frame-ancestors 'none'");
        assert.match(String(page.headers['content-security-policy']), /frame-ancestors 'none'/);
      }
      assert.equal(page.headers['referrer-policy'], 'no-referrer');
    });
  });
}
