import { test } from 'node:test';
import assert from 'node:assert/strict';
import { registry } from '../../collections/index.js';
import { nounsOf } from '../../collections/machinery/collection.js';
import { buildOpenApi } from './document.js';

type Op = { summary?: string; operationId?: string };
const METHODS = ['get', 'post', 'patch', 'delete', 'put', 'head', 'options'];

/** Swagger UI shows each summary as the operation's title: a proper sentence, never "Read one of users". */
test('every operation summary is a sentence: a singular noun for one item, never "one of"', () => {
  const doc = buildOpenApi(registry.list, 'https://api.example') as { paths: Record<string, Record<string, Op>> };
  const ops = Object.entries(doc.paths).flatMap(([path, item]) =>
    METHODS.filter((m) => item[m]).map((m) => ({ path, method: m, ...item[m] })),
  );
  assert.ok(ops.length > 20);
  for (const op of ops) {
    assert.ok(op.summary, `${op.method} ${op.path} has a summary`);
    assert.doesNotMatch(op.summary, /one of|undefined/, `${op.method} ${op.path}: ${op.summary}`);
    assert.match(op.summary, /^[A-Z]/, `${op.method} ${op.path}: ${op.summary}`);
  }
  const summary = (path: string, method: string) => doc.paths[path][method].summary;
  assert.equal(summary('/users', 'get'), 'List users');
  assert.equal(summary('/users', 'post'), 'Create users');
  assert.equal(summary('/users/{id}', 'get'), 'Read one user');
  assert.equal(summary('/statuses/{id}', 'get'), 'Read one status');
  assert.equal(summary('/deliveries/{id}', 'get'), 'Read one delivery');
  assert.equal(summary('/jobs/{id}', 'delete'), 'Delete one job (no body needed)');
  assert.equal(summary('/jobs', 'get'), 'List jobs');
});

test('nounsOf: the singular derived by the usual English endings, or declared; camelCase in words', () => {
  const of = (name: string, singular?: string) => nounsOf({ name, singular });
  assert.deepEqual(of('users'), { plural: 'users', singular: 'user' });
  assert.deepEqual(of('statuses'), { plural: 'statuses', singular: 'status' });
  assert.deepEqual(of('deliveries'), { plural: 'deliveries', singular: 'delivery' });
  assert.deepEqual(of('taxRates'), { plural: 'tax rates', singular: 'tax rate' });
  assert.deepEqual(of('unavailabilities'), { plural: 'unavailabilities', singular: 'unavailability' });
  assert.deepEqual(of('customFieldDefinitions').singular, 'custom field definition');
  assert.deepEqual(of('addresses').singular, 'address');
  assert.deepEqual(of('invoices').singular, 'invoice');
  assert.deepEqual(of('charges').singular, 'charge');
  assert.deepEqual(of('people', 'person'), { plural: 'people', singular: 'person' });
});
