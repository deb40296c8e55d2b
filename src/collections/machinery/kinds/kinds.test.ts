import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Type } from '@sinclair/typebox';
import { f, kinds } from '../fields.js';
import { isoTime, KINDS, kindOf, toApi } from './index.js';
import type { ScalarField } from './kind.js';

describe('values as the API shows them', () => {
  it('isoTime writes what Date#toISOString writes, for every millisecond of years 0-9999', () => {
    const edges = [
      0, 1, 999, 1000, 86_399_999, 86_400_000, 951_782_400_000 /* 2000-02-29 */, 4_107_542_400_000 /* 2100-03-01 */,
      253_402_300_799_999, -1, -86_400_001, -62_167_219_200_000 /* 0000-01-01 */, 1.5,
    ];
    for (const ms of edges) assert.equal(isoTime(ms), new Date(Math.trunc(ms)).toISOString(), String(ms));
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 253_402_300_799_999 }), (ms) => isoTime(ms) === new Date(ms).toISOString()),
      { numRuns: 20_000 },
    );
    fc.assert(
      fc.property(fc.integer({ min: -62_167_219_200_000, max: 0 }), (ms) => isoTime(ms) === new Date(ms).toISOString()),
      { numRuns: 2_000 },
    );
  });

  it('a stored time outside years 0-9999 shows as that end of the range, never an error (issue 25)', () => {
    const last = '9999-12-31T23:59:59.999Z';
    const first = '0000-01-01T00:00:00.000Z';
    // What Retry-After: 99999999999999999999 or 9000000000000 (seconds) once stored, and the column's ends.
    for (const ms of [253_402_300_800_000, 8.64e15, 9e15, 1e23, Number.MAX_VALUE, Infinity])
      assert.equal(isoTime(ms), last, String(ms));
    for (const ms of [-62_167_219_200_001, -8.64e15, -1e23, -Infinity]) assert.equal(isoTime(ms), first, String(ms));
    assert.equal(toApi({ type: 'time' }, '9223372036854775807'), last);
    assert.equal(toApi({ type: 'time' }, '-9223372036854775808'), first);
    assert.equal(toApi({ type: 'time' }, 1e23), last);
    assert.equal(toApi({ type: 'time' }, 'not a time'), null);
    fc.assert(
      fc.property(fc.double(), (ms) => {
        const shown = toApi({ type: 'time' }, ms);
        return shown === null ? Number.isNaN(ms) : /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/.test(shown as string);
      }),
      { numRuns: 5_000 },
    );
  });

  it('converts each stored type as before: flags, booleans, times, JSON, numbers; null and undefined are null', () => {
    assert.equal(toApi({ type: 'boolean' }, 1), true);
    assert.equal(toApi({ type: 'boolean' }, 0), false);
    assert.equal(toApi({ type: 'time' }, '1700000000123'), '2023-11-14T22:13:20.123Z');
    assert.deepEqual(toApi({ type: 'json' }, '{"a":[1]}'), { a: [1] });
    assert.equal(toApi({ type: 'integer' }, '42'), 42);
    assert.equal(toApi({ type: 'flag' }, 1), 1);
    assert.equal(toApi({ type: 'string' }, 'x'), 'x');
    for (const type of ['boolean', 'time', 'json', 'integer', 'number', 'flag', 'string', 'datetime'] as const) {
      assert.equal(toApi({ type }, null), null, type);
      assert.equal(toApi({ type }, undefined), null, type);
    }
  });
});

describe('value kinds: each one file, each asked instead of its tag', () => {
  // One field of every value type, as collections declare them, with API values it holds.
  const samples: { field: ScalarField; values: unknown[]; wrong: unknown; literal?: unknown }[] = [
    { field: f.string('c'), values: ['x', '', 'Ünïcode'], wrong: 5, literal: 'x' },
    { field: f.datetime('c'), values: ['2026-12-04T10:00:00+01:00'], wrong: 5, literal: '2026-12-04T10:00:00Z' },
    { field: f.integer('c'), values: [0, -(2 ** 31), 2 ** 31 - 1], wrong: 'one', literal: 7 },
    { field: f.number('c'), values: [0.1, -3.25, 1e12], wrong: 'one', literal: 0.5 },
    { field: f.money('c'), values: [0.1, 19.99, -1e9, 1e9, 0.0001], wrong: 'one', literal: 19.99 },
    { field: f.decimal('c', 3), values: [1.125, 0, 0.001], wrong: true, literal: 1.5 },
    { field: f.boolean('c'), values: [true, false], wrong: 1, literal: true },
    { field: f.flag('c'), values: [0, 1], wrong: 'yes', literal: 1 },
    {
      field: f.instant('c'),
      values: ['2026-12-04T09:00:00.000Z'],
      wrong: 'soon',
      literal: '2026-12-04T10:00:00+01:00',
    },
    { field: f.json('c', Type.Any()), values: [{ a: [1, 'b'] }, [], 'text'], wrong: undefined },
    {
      field: kinds.location('p'),
      values: [
        { lat: 51.5, lng: -0.1275 },
        { lat: -90, lng: 180 },
      ],
      wrong: 'here',
    },
  ];

  it('KINDS has one kind per value type, and every builder makes a field of a kind', () => {
    const types = new Set(samples.map((s) => s.field.type));
    assert.deepEqual([...types].sort(), Object.keys(KINDS).sort());
  });

  it('what a kind writes it shows back, and an export of it restores the same columns', () => {
    for (const { field, values } of [...samples]) {
      const kind = kindOf(field);
      for (const value of [...values, null]) {
        const row: Record<string, unknown> = {};
        kind.write(field, value, row);
        assert.deepEqual(Object.keys(row).sort(), [...kind.columns(field)].sort(), field.type);
        const shown = kind.toApi(field)(...kind.columns(field).map((c) => row[c]));
        assert.deepEqual(shown, value, `${field.type} ${JSON.stringify(value)}`);
        const restored: Record<string, unknown> = {};
        assert.equal(kind.restore(field, shown, restored), undefined, field.type);
        assert.deepEqual(restored, row, field.type);
        if (value !== null) assert.equal(kind.problem?.(field, value), undefined, field.type);
      }
    }
  });

  it('refuses what it cannot hold: an export of the wrong type, a literal of the wrong type, too many decimals', () => {
    for (const { field, wrong } of samples) {
      if (wrong === undefined) continue; // stored JSON holds any value
      assert.match(String(kindOf(field).restore(field, wrong, {})), /must/, field.type);
      if (kindOf(field).compare)
        assert.ok('why' in kindOf(field).compare!.bind(wrong as string, field, 2), `${field.type} bind ${wrong}`);
    }
    const money = f.money('c');
    assert.match(String(kindOf(money).problem!(money, 2e9)), /at most 1,000,000,000 in magnitude/);
    const quantity = f.decimal('c', 3);
    assert.equal(kindOf(quantity).problem!(quantity, 0.0001), 'must have at most 3 decimals');
    assert.deepEqual(kindOf(money).compare!.bind(1.005, money, 2), {
      why: "must have at most 2 decimals (the account's currency)",
    });
    const where = kinds.location('p');
    assert.match(String(kindOf(where).problem!(where, { lat: 1 })), /both lat and lng/);
    assert.match(String(kindOf(where).restore(where, { lat: 91, lng: 0 }, {})), /lat must be from -90 to 90/);
    const count = f.integer('c');
    assert.deepEqual(kindOf(count).compare!.bind(2 ** 31, count, undefined), {
      why: 'needs an integer from -2147483648 to 2147483647',
    });
    assert.deepEqual(kindOf(count).compare!.bind(2 ** 31, { wide: true }, undefined), { value: 2 ** 31 });
  });

  it('stored JSON and locations are neither filtered nor summed; only text takes ~; only numbers add up', () => {
    const compared = Object.entries(KINDS)
      .filter(([, k]) => k.compare)
      .map(([t]) => t);
    assert.deepEqual(compared.sort(), [
      'boolean',
      'datetime',
      'decimal',
      'flag',
      'integer',
      'number',
      'string',
      'time',
    ]);
    const text = Object.entries(KINDS)
      .filter(([, k]) => k.compare?.text)
      .map(([t]) => t);
    assert.deepEqual(text.sort(), ['datetime', 'string']);
    const summed = Object.entries(KINDS)
      .filter(([, k]) => k.sum)
      .map(([t]) => `${t}:${k(t)}`);
    function k(t: string) {
      return KINDS[t as keyof typeof KINDS].sum;
    }
    assert.deepEqual(summed.sort(), ['decimal:exact', 'integer:exact', 'number:double']);
  });

  it('no file of the machinery or the transport outside kinds/ asks a value type by its tag', () => {
    const root = path.resolve(fileURLToPath(import.meta.url), '../../../../../../src');
    const dirs = ['collections/machinery', 'collections/machinery/write', 'http', 'accounts/transfer'];
    const tag = /\.type\s*[!=]==\s*'(string|integer|number|decimal|boolean|flag|time|datetime|json|location)'/;
    const found: string[] = [];
    for (const dir of dirs)
      for (const name of fs.readdirSync(path.join(root, dir))) {
        if (!name.endsWith('.ts') || name.endsWith('.test.ts')) continue;
        const text = fs.readFileSync(path.join(root, dir, name), 'utf8');
        text.split('\n').forEach((line, i) => {
          if (tag.test(line)) found.push(`${dir}/${name}:${i + 1}: ${line.trim()}`);
        });
      }
    assert.deepEqual(found, []);
    // The scan itself sees such a check (control).
    assert.ok(tag.test("if (field.type === 'location')"));
  });
});
