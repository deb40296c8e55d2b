import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { isoTime, toApi } from './values.js';

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
