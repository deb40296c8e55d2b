import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Validator } from '@seriousme/openapi-schema-validator';
import { registry } from '../../collections/index.js';
import { buildOpenApi } from './document.js';

const doc: any = buildOpenApi(registry.list, 'http://127.0.0.1:3000');
const params = (op: any) => op.parameters.map((p: any) => p.$ref?.split('/').pop() ?? p.name);

test('OpenAPI: Idempotency-Key, 409, If-Match and 412 on every write, If-None-Match and 304 on item reads', async () => {
  // Read-only collections (events, deliveries) have no writes; their actions still take a key.
  for (const c of registry.list) {
    for (const action of Object.keys(c.actions ?? {})) {
      // A GET action (a job's slots) writes nothing: no key, no If-Match.
      if (c.getActions?.includes(action)) continue;
      const at = doc.paths[`/${c.name}/${action}`] ?? doc.paths[`/${c.name}/{id}/${action}`];
      assert.ok(params(at.post).includes('IdempotencyKey'), `${c.name} ${action}`);
      // An action has no ETag: If-Match other than `*` is a 412.
      assert.ok(params(at.post).includes('IfMatch') && at.post.responses['412'], `${c.name} ${action}`);
    }
    if (c.readOnly) continue;
    const collection = doc.paths[`/${c.name}`];
    const item = doc.paths[`/${c.name}/{id}`];
    for (const op of [collection.post, collection.patch, collection.delete, item.patch, item.delete].filter(Boolean)) {
      assert.ok(params(op).includes('IdempotencyKey'), op.operationId);
      assert.ok(op.responses['409'], op.operationId);
      assert.ok(op.responses['200'].headers['Idempotency-Replayed'], op.operationId);
    }
    // A collection has no ETag, but If-Match is not ignored there: only `*` matches (issue 25).
    for (const op of [collection.post, collection.patch, collection.delete, item.patch, item.delete].filter(Boolean)) {
      assert.ok(params(op).includes('IfMatch') && op.responses['412'], op.operationId);
    }
    // Append-only items (locations) are never changed: no PATCH.
    if (!c.appendOnly) assert.ok(item.patch.responses['200'].headers.ETag);
    assert.ok(
      params(item.get).includes('IfNoneMatch') && item.get.responses['304'] && item.get.responses['200'].headers.ETag,
      c.name,
    );
  }
  const text = JSON.stringify(doc.components.responses);
  for (const code of [1006, 1080, 1090, 1249]) assert.ok(text.includes(`\`${code}\``), `code ${code}`);
  assert.ok(doc.components.responses.E409 && doc.components.responses.E412);
  const result = await new Validator().validate(structuredClone(doc));
  assert.equal(result.valid, true, JSON.stringify(result.errors, null, 2));
});
