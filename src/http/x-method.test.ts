import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { suiteWithTenants, call, DIALECTS, skipUnless } from '../../test/helpers.js';

/**
 * X-Method (spec §4.2) replaces POST only; any method may ask for GET with it (the spec's own
 * example: a PATCH with `X-Method: GET`). A method that must not change anything (GET, HEAD,
 * OPTIONS) never does, and PUT is no way to PATCH or DELETE. Each row: the method sent, the
 * X-Method, the answer, and what became of the item.
 */
type Effect = 'unchanged' | 'patched' | 'deleted';
const TABLE: [method: string, xMethod: string, status: number, effect: Effect][] = [
  ['HEAD', 'DELETE', 400, 'unchanged'],
  ['OPTIONS', 'DELETE', 400, 'unchanged'],
  ['GET', 'DELETE', 400, 'unchanged'],
  ['PUT', 'DELETE', 400, 'unchanged'],
  ['PATCH', 'DELETE', 400, 'unchanged'],
  ['HEAD', 'PATCH', 400, 'unchanged'],
  ['OPTIONS', 'PATCH', 400, 'unchanged'],
  ['GET', 'PATCH', 400, 'unchanged'],
  ['PUT', 'PATCH', 400, 'unchanged'],
  ['DELETE', 'PATCH', 400, 'unchanged'],
  ['PUT', 'POST', 400, 'unchanged'],
  ['OPTIONS', 'POST', 400, 'unchanged'],
  // An override to GET reads, whatever was sent.
  ['PATCH', 'GET', 200, 'unchanged'],
  ['DELETE', 'GET', 200, 'unchanged'],
  ['PUT', 'GET', 200, 'unchanged'],
  ['HEAD', 'GET', 200, 'unchanged'],
  ['OPTIONS', 'GET', 200, 'unchanged'],
  ['POST', 'GET', 200, 'unchanged'],
  // The same method as sent is no override.
  ['PATCH', 'PATCH', 200, 'patched'],
  ['DELETE', 'DELETE', 200, 'deleted'],
  // POST stands for the others.
  ['POST', 'PATCH', 200, 'patched'],
  ['POST', 'DELETE', 200, 'deleted'],
  // Not a method at all.
  ['POST', 'TRACE', 400, 'unchanged'],
  ['GET', 'HEAD', 400, 'unchanged'],
];

for (const dialect of DIALECTS) {
  describe(`X-Method: method × X-Method → effect (${dialect})`, { skip: skipUnless(dialect) }, () => {
    const { t, a } = suiteWithTenants(dialect);

    for (const [method, xMethod, status, effect] of TABLE) {
      test(`${method} with X-Method: ${xMethod} → ${status}, ${effect}`, async () => {
        const made = await call(t.app, a.token, 'POST', '/clients', { clients: [{ name: 'Original' }] });
        const id = made.body.clients[0].id as number;
        const item = xMethod === 'DELETE' ? { id } : { id, name: 'Changed' };
        const body = method === 'HEAD' || method === 'GET' ? undefined : { clients: [item] };
        const res = await call(t.app, a.token, method, `/clients/${id}`, body, { 'x-method': xMethod });
        assert.equal(res.status, status, res.raw);
        if (status === 400 && method !== 'HEAD') assert.equal(res.body.error.code, 1005);
        const now = await call(t.app, a.token, 'GET', `/clients/${id}`);
        if (effect === 'deleted') assert.equal(now.status, 404, 'the item is gone');
        else {
          assert.equal(now.status, 200, 'the item still exists');
          assert.equal(now.body.clients[0].name, effect === 'patched' ? 'Changed' : 'Original');
        }
      });
    }

    test('on a collection: GET, HEAD and OPTIONS with X-Method: DELETE delete nothing', async () => {
      const made = await call(t.app, a.token, 'POST', '/clients', { clients: [{ name: 'Kept' }] });
      const id = made.body.clients[0].id as number;
      for (const method of ['GET', 'HEAD', 'OPTIONS', 'PUT']) {
        const body = method === 'GET' || method === 'HEAD' ? undefined : { clients: [{ id }] };
        const res = await call(t.app, a.token, method, '/clients', body, { 'x-method': 'DELETE' });
        assert.equal(res.status, 400, `${method}: ${res.raw}`);
      }
      assert.equal((await call(t.app, a.token, 'GET', `/clients/${id}`)).status, 200);
    });
  });
}
