import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { registry } from '../src/collections/index.js';
import { CUSTOM_COLLECTIONS } from '../src/collections/machinery/custom.js';
import { CMP_OPS } from '../src/collections/machinery/where.js';
import { buildOpenApi } from '../src/http/openapi/document.js';
import { byTheirJob, followsJob } from '../src/collections/policy.js';

/**
 * Lists that cannot be derived from the declarations where they are written (the SDK is its own
 * package, README is prose) are pinned here to the one list they copy, so they cannot drift.
 */
const ROOT = path.resolve(import.meta.dirname, '../..');
const read = (file: string) => fs.readFileSync(path.join(ROOT, file), 'utf8');

test("the SDK's Operator, README and OpenAPI name exactly the where operators", () => {
  const sdk = /export type Operator = ([^;]+);/.exec(read('packages/client/src/types.ts'));
  assert.ok(sdk, 'packages/client/src/types.ts declares Operator');
  const union = sdk[1].split('|').map((s) => s.trim().replace(/^'|'$/g, ''));
  assert.deepEqual(union.sort(), [...CMP_OPS].sort());
  const readme = /with `([^`]+)`, `and`, `or`/.exec(read('README.md').replace(/\n\s*/g, ' '));
  assert.ok(readme, "README's modifiers paragraph lists the operators");
  assert.deepEqual(readme[1].split(' ').sort(), [...CMP_OPS].sort());
  const where = JSON.stringify(buildOpenApi(registry.list, 'http://127.0.0.1'));
  assert.ok(where.includes(`op one of \`${CMP_OPS.join(' ')}\``));
});

test('the collections with custom fields are those CUSTOM_COLLECTIONS names', () => {
  const declared = registry.list.filter((c) => c.customFields).map((c) => c.name);
  assert.deepEqual([...declared].sort(), [...CUSTOM_COLLECTIONS].sort());
  // customFieldDefinitions.collection accepts exactly them, and its description names them all.
  const definitions = registry.get('customFieldDefinitions')!;
  for (const name of CUSTOM_COLLECTIONS) assert.match(definitions.description ?? '', new RegExp(`\\b${name}\\b`));
});

test("the collections a Contractor sees by their job are those whose declared 'own' scope is byTheirJob", () => {
  // PRODUCT §13 and §17: "those jobs' notes, charges and files", and their form submissions.
  const following = registry.list.filter(followsJob).map((c) => c.name);
  assert.deepEqual(following.sort(), ['charges', 'files', 'formSubmissions', 'notes']);
  // Derived, not listed: every collection declaring the scope follows its job, none other does.
  const declared = registry.list.filter((c) => c.policy.own === byTheirJob).map((c) => c.name);
  assert.deepEqual(declared.sort(), following);
  // Visits and timesheets have a job too, and are a Contractor's by their user instead.
  for (const name of ['visits', 'timesheets']) assert.ok(!following.includes(name), name);
});
