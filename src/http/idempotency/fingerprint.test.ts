import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { DIALECTS, suiteWithTenants, call, skipUnless } from '../../../test/helpers.js';
import { canonicalJson } from './fingerprint.js';

describe('canonical JSON (the fingerprint of a JSON body)', () => {
  test('one text per parsed value: keys sorted at every depth, no whitespace; arrays keep their order', () => {
    const same = [
      '{"b":1,"a":{"y":[1,{"q":true,"p":null}],"x":"é"}}',
      '{ "a" : { "x" : "\\u00e9", "y" : [ 1.0 , { "p" : null , "q" : true } ] } , "b" : 1e0 }',
    ];
    const texts = same.map((s) => canonicalJson(JSON.parse(s)));
    assert.equal(texts[0], '{"a":{"x":"é","y":[1,{"p":null,"q":true}]},"b":1}');
    assert.equal(texts[1], texts[0]);
    assert.notEqual(canonicalJson([1, 2]), canonicalJson([2, 1]));
    assert.notEqual(canonicalJson({ a: '1' }), canonicalJson({ a: 1 }));
    assert.notEqual(canonicalJson({ a: null }), canonicalJson({}));
    // Keys that need escaping, and keys that sort by code unit, not by locale.
    assert.equal(canonicalJson({ 'a"b': 1, B: 2, a: 3 }), '{"B":2,"a":3,"a\\"b":1}');
  });
});

for (const dialect of DIALECTS) {
  describe(`Idempotency-Key fingerprints compare JSON as parsed (${dialect})`, { skip: skipUnless(dialect) }, () => {
    const { t, a } = suiteWithTenants(dialect);

    const key = () => `fp-${crypto.randomBytes(8).toString('hex')}`;
    const send = (method: string, url: string, text: string, k: string) =>
      call(t.app, a.token, method, url, text, { 'idempotency-key': k });
    const jobsTitled = async (title: string) =>
      (
        await t.database.db
          .selectFrom('jobs')
          .select('id')
          .where('account_id', '=', a.accountId)
          .where('title', '=', title)
          .execute()
      ).length;

    test('the same JSON with keys in another order and other whitespace is a replay; another value is 422', async () => {
      const k = key();
      const first = await send(
        'POST',
        '/jobs',
        '{"jobs":[{"title":"Reordered","priority":"high","description":"Leak","orderNumber":"PO-1"}]}',
        k,
      );
      assert.equal(first.status, 200, first.raw);
      const again = await send(
        'POST',
        '/jobs',
        '{\n  "jobs" : [ { "orderNumber" : "PO-1",\t"description":"Leak",  "priority":"high", "title":"Reordered" } ]\n}\n',
        k,
      );
      assert.equal(again.status, 200, again.raw);
      assert.equal(again.headers['idempotency-replayed'], 'true');
      assert.equal(again.raw, first.raw);
      assert.equal(await jobsTitled('Reordered'), 1);

      const changed = await send(
        'POST',
        '/jobs',
        '{"jobs":[{"priority":"low","title":"Reordered","description":"Leak","orderNumber":"PO-1"}]}',
        k,
      );
      assert.equal(changed.status, 422, changed.raw);
      assert.equal(changed.body.error.code, 1249);
      assert.equal(changed.headers['idempotency-replayed'], undefined);
      const extra = await send(
        'POST',
        '/jobs',
        '{"jobs":[{"title":"Reordered","priority":"high","description":"Leak","orderNumber":"PO-1","dueDate":null}]}',
        k,
      );
      assert.equal(extra.body.error.code, 1249, 'a field more is another body');
      assert.equal(await jobsTitled('Reordered'), 1);
    });

    test('items are a list: the same items in another order are another body (422)', async () => {
      const k = key();
      const two = (x: string, y: string) => `{"jobs":[{"title":"${x}"},{"title":"${y}"}]}`;
      assert.equal((await send('POST', '/jobs', two('Order A', 'Order B'), k)).status, 200);
      const swapped = await send('POST', '/jobs', two('Order B', 'Order A'), k);
      assert.equal(swapped.status, 422);
      assert.equal(swapped.body.error.code, 1249);
      assert.equal(await jobsTitled('Order A'), 1);
    });

    test('a PATCH of an item is replayed whatever the order of its keys; the change is made once', async () => {
      const made = await call(t.app, a.token, 'POST', '/jobs', { jobs: [{ title: 'Patched once' }] });
      const id = made.body.jobs[0].id as number;
      const k = key();
      const first = await send(
        'PATCH',
        `/jobs/${id}`,
        `{"jobs":[{"id":${id},"priority":"urgent","description":"x"}]}`,
        k,
      );
      assert.equal(first.status, 200, first.raw);
      const etag = first.headers.etag;
      const again = await send(
        'PATCH',
        `/jobs/${id}`,
        `{"jobs":[{"description":"x","priority":"urgent","id":${id}}]}`,
        k,
      );
      assert.equal(again.status, 200, again.raw);
      assert.equal(again.headers['idempotency-replayed'], 'true');
      assert.equal(again.headers.etag, etag);
      assert.equal(again.raw, first.raw);
      const changed = await send(
        'PATCH',
        `/jobs/${id}`,
        `{"jobs":[{"description":"y","priority":"urgent","id":${id}}]}`,
        k,
      );
      assert.equal(changed.body.error.code, 1249);
    });
  });
}
