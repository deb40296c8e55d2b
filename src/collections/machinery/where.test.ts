import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseWhere } from './where.js';
import { ApiError } from '../../errors.js';

test('where: precedence (and binds tighter than or) and parentheses', () => {
  assert.deepEqual(parseWhere('a = 1 or b = 2 and c = 3'), {
    type: 'or',
    left: { type: 'cmp', field: 'a', op: '=', value: 1 },
    right: {
      type: 'and',
      left: { type: 'cmp', field: 'b', op: '=', value: 2 },
      right: { type: 'cmp', field: 'c', op: '=', value: 3 },
    },
  });
  assert.deepEqual(parseWhere('(a = 1 OR b = 2) AND c != null'), {
    type: 'and',
    left: {
      type: 'or',
      left: { type: 'cmp', field: 'a', op: '=', value: 1 },
      right: { type: 'cmp', field: 'b', op: '=', value: 2 },
    },
    right: { type: 'cmp', field: 'c', op: '!=', value: null },
  });
});

test('where: values and operators', () => {
  const ops = ['~', '!~', '=', '!=', '<', '<=', '>', '>='];
  for (const op of ops) assert.equal((parseWhere(`x ${op} 1`) as { op: string }).op, op);
  assert.equal((parseWhere('x~"a b"') as { value: string }).value, 'a b');
  assert.equal((parseWhere("x = 'it\\'s'") as { value: string }).value, "it's");
  assert.equal((parseWhere('x = -1.5e2') as { value: number }).value, -150);
  assert.equal((parseWhere('x = true') as { value: boolean }).value, true);
  assert.equal((parseWhere('role.id = 3') as { field: string }).field, 'role.id');
});

test('where: bad input is a 400 error, never a crash', () => {
  const bad = [
    '',
    '   ',
    'x',
    'x =',
    '= 1',
    'x = 1 and',
    '(x = 1',
    'x = 1)',
    'x == 1',
    'x = "a',
    'x = 1 x = 2',
    'x = @',
    '1 = 1',
    '('.repeat(100) + 'x = 1' + ')'.repeat(100),
    Array.from({ length: 100 }, () => 'x = 1').join(' and '),
    'x = 1e999',
    'x'.repeat(5000),
  ];
  for (const src of bad) {
    assert.throws(
      () => parseWhere(src),
      (e: unknown) => e instanceof ApiError && e.status === 400 && e.body.code === 1002,
      JSON.stringify(src.slice(0, 40)),
    );
  }
});
