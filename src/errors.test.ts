import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { ERRORS, VALIDATION } from './errors.js';

// docs/errors.md is the published list; it must name every code with its status and type.
test('docs/errors.md lists every error code with its HTTP status and type', () => {
  const doc = fs.readFileSync(new URL('../../docs/errors.md', import.meta.url), 'utf8');
  const rows = new Map<number, [number, string]>();
  for (const m of doc.matchAll(/^\| (\d{4}) \| (\d{3}) \| (\w+) \|/gm)) rows.set(Number(m[1]), [Number(m[2]), m[3]]);
  const expected = new Map<number, [number, string]>([
    ...Object.values(ERRORS).map((e) => [e.code, [e.status, e.type]] as [number, [number, string]]),
    ...Object.values(VALIDATION).map((v) => [v.code, [422, 'validation']] as [number, [number, string]]),
  ]);
  assert.deepEqual([...rows.entries()].sort(), [...expected.entries()].sort());
});

test('codes are unique', () => {
  const codes = [...Object.values(ERRORS), ...Object.values(VALIDATION)].map((e) => e.code);
  assert.equal(new Set(codes).size, codes.length);
});
