import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { registry } from '../src/collections/index.js';
import { generatedBlocks, renderDoc } from './collections-doc.js';

const file = path.resolve(import.meta.dirname, '../../docs/collections.md');

test('docs/collections.md has a field table for every collection and the role table, as the declarations say (npm run docs)', () => {
  const text = fs.readFileSync(file, 'utf8');
  assert.deepEqual(generatedBlocks(text).sort(), ['roles', ...registry.list.map((c) => `fields:${c.name}`)].sort());
  assert.equal(renderDoc(text, registry), text, 'stale: run `npm run docs`');
});

test('a changed declaration makes the document stale (control)', () => {
  const text = fs.readFileSync(file, 'utf8');
  const notes = registry.get('notes')!;
  const body = notes.fields.body;
  notes.fields.body = { ...body, description: 'changed' };
  try {
    assert.notEqual(renderDoc(text, registry), text);
  } finally {
    notes.fields.body = body;
  }
});
