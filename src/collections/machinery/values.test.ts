import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { isoTime, toApi } from './values.js';

describe('values as the API shows them', () => {
  it('isoTime writes what Date#toISOString writes, for every millisecond of years 1970-9999 and beyond', () => {
    const edges = [
      0,
      1,
      999,
      1000,
      86_399_999,
      86_400_000,
      951_782_400_000 /* 2000-02-29 */,
      4_107_542_400_000 /* 2100-03-01 */,
      253_402_300_799_999,
      253_402_300_800_000,
      -1,
      -86_400_001,
      8.64e15,
      1.5,
      Number.NaN,
    ];
    for (const ms of edges) {
      let expected: string | undefined;
      try {
        expected = new Date(ms).toISOString();
      } catch {
        assert.throws(() => isoTime(ms), RangeError, `${ms}: an invalid time is refused as Date refuses it`);
        continue;
      }
      assert.equal(isoTime(ms), expected, String(ms));
    }
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 253_402_300_799_999 }), (ms) => isoTime(ms) === new Date(ms).toISOString()),
      { numRuns: 20_000 },
    );
    fc.assert(
      fc.property(fc.integer({ min: -8.64e15, max: 8.64e15 }), (ms) => isoTime(ms) === new Date(ms).toISOString()),
      { numRuns: 2_000 },
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
