import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import {
  decimalText,
  divRound,
  fromScaled,
  lineAmounts,
  scaledProblem,
  toScaled,
  withinLimit,
  MONEY_SCALE,
  PERCENT_SCALE,
  QUANTITY_SCALE,
} from './money.js';

/**
 * An independent reference: decimals as BigInt numerators over powers of ten, read from the TEXT a
 * client sends (never through a double), and PRODUCT §9's rounding written from its definition
 * (halves away from zero: round |x| half up, put the sign back).
 */
function parseText(text: string): { n: bigint; d: number } {
  const neg = text.startsWith('-');
  const [int, frac = ''] = (neg ? text.slice(1) : text).split('.');
  const n = BigInt(int + frac);
  return { n: neg ? -n : n, d: frac.length };
}
/** n / 10^d rounded to a multiple of 10^-e, as an integer count of 10^-e. */
function roundTo(n: bigint, d: number, e: number): bigint {
  const sign = n < 0n ? -1n : 1n;
  const abs = n < 0n ? -n : n;
  if (d <= e) return sign * abs * 10n ** BigInt(e - d);
  const div = 10n ** BigInt(d - e);
  const q = abs / div;
  return sign * (2n * (abs % div) >= div ? q + 1n : q);
}
function reference(q: string, p: string, t: string | null, e: number) {
  const Q = parseText(q);
  const P = parseText(p);
  const sub = roundTo(Q.n * P.n, Q.d + P.d, e); // minor units
  let tax = 0n;
  if (t !== null) {
    const T = parseText(t);
    tax = roundTo(sub * T.n, e + T.d + 2, e);
  }
  return { subtotal: sub, tax, total: sub + tax };
}

/** A decimal's text with `maxDecimals` decimals at most, |x| ≤ 1e9 (the bounds included). */
const decimalArb = (maxDecimals: number, opts: { min?: bigint; positive?: boolean } = {}) =>
  fc.integer({ min: 0, max: maxDecimals }).chain((d) => {
    const scale = 10n ** BigInt(d);
    const max = 1_000_000_000n * scale;
    const min = opts.positive ? 1n : (opts.min ?? -max);
    return fc
      .oneof(
        fc.bigInt({ min, max }),
        fc.constantFrom(min, max),
        fc.bigInt({ min: min > -1000n ? min : -1000n, max: 1000n }),
      )
      .filter((n) => !opts.positive || n > 0n)
      .map((n) => {
        const neg = n < 0n;
        const s = (neg ? -n : n).toString().padStart(d + 1, '0');
        const text = d === 0 ? s : `${s.slice(0, -d)}.${s.slice(-d)}`;
        return (neg ? '-' : '') + text;
      });
  });

describe('exact decimals (money.ts)', () => {
  it('a JSON number of at most 4 decimals within 1e9 converts exactly, and back to the same number', () => {
    fc.assert(
      fc.property(decimalArb(4), (text) => {
        const n = JSON.parse(text) as number; // what Fastify hands over
        assert.equal(scaledProblem(n, MONEY_SCALE), undefined, text);
        const scaled = toScaled(n, MONEY_SCALE);
        const ref = parseText(text);
        assert.equal(BigInt(scaled), ref.n * 10n ** BigInt(MONEY_SCALE - ref.d), text);
        assert.equal(fromScaled(scaled, MONEY_SCALE), n, text);
        assert.equal(JSON.stringify(fromScaled(scaled, MONEY_SCALE)), JSON.stringify(n));
      }),
      { numRuns: 3000 },
    );
  });

  it('refuses more decimals than allowed, non-finite values and magnitudes past 1e9, never rounding', () => {
    for (const [v, scale] of [
      [0.001, 2],
      [1.005, 2],
      [0.1 + 0.2, 4],
      [1e-7, 4],
      [1_000_000_000.01, 2],
      [-1_000_000_001, 0],
      [Infinity, 2],
      [-Infinity, 2],
      [NaN, 2],
      [1e21, 2],
      [12.3456, 3],
    ] as const)
      assert.ok(scaledProblem(v, scale) !== undefined, `${v} at scale ${scale}`);
    assert.equal(JSON.parse('1e400'), Infinity); // the JSON text 1e400 reaches us as Infinity: refused above
    assert.equal(scaledProblem(1e9, 4), undefined);
    assert.equal(scaledProblem(-1e9, 0), undefined);
    assert.equal(decimalText(1e-7), '0.0000001');
    assert.equal(decimalText(-2.5e-6), '-0.0000025');
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 3 }), decimalArb(4), (allowed, text) => {
        const n = JSON.parse(text) as number;
        const sent = text.includes('.') ? text.replace(/0+$/, '').split('.')[1].length : 0;
        assert.equal(scaledProblem(n, allowed) === undefined, sent <= allowed, `${text} at ${allowed}`);
      }),
      { numRuns: 2000 },
    );
  });

  it('divRound rounds halves away from zero', () => {
    assert.equal(divRound(5n, 10n), 1n);
    assert.equal(divRound(-5n, 10n), -1n);
    assert.equal(divRound(4n, 10n), 0n);
    assert.equal(divRound(-4n, 10n), 0n);
    assert.equal(divRound(15n, 10n), 2n);
    assert.equal(divRound(-25n, 10n), -3n);
  });

  it('worked examples (docs/money.md)', () => {
    const ex = (q: string, p: string, t: string | null, e: number) => {
      const r = lineAmounts(
        toScaled(JSON.parse(q), QUANTITY_SCALE),
        toScaled(JSON.parse(p), MONEY_SCALE),
        t === null ? null : toScaled(JSON.parse(t), PERCENT_SCALE),
        e,
      );
      return [r.subtotal, r.tax, r.total].map((v) => fromScaled(v, MONEY_SCALE));
    };
    assert.deepEqual(ex('1.5', '85.25', '8.875', 2), [127.88, 11.35, 139.23]); // 127.875 → 127.88; 11.349… → 11.35
    assert.deepEqual(ex('3', '-10.005', null, 3), [-30.015, 0, -30.015]);
    assert.deepEqual(ex('0.333', '0.05', '10', 2), [0.02, 0, 0.02]); // 0.01665 → 0.02; 0.002 → 0.00
    assert.deepEqual(ex('1', '-0.05', '10', 2), [-0.05, -0.01, -0.06]); // tax -0.005 → -0.01 (away from zero)
    assert.deepEqual(ex('2.5', '101', '20', 0), [253, 51, 304]); // JPY: 252.5 → 253; 50.6 → 51
    // 10^6 × 10^3 with 8 decimals on the way: 10^17 units, past 2^53 (BigInt keeps it exact).
    assert.deepEqual(ex('1000000', '999.99', '12.5', 2), [999990000, 124998750, 1124988750]);
    assert.deepEqual(ex('999999.999', '999.99', null, 2), [999989999, 0, 999989999]); // 999989999.00001
  });

  it('line amounts equal the BigInt reference over random lines, every decimal count, discounts and the 1e9 bounds', () => {
    fc.assert(
      fc.property(
        decimalArb(3, { positive: true }),
        fc.integer({ min: 0, max: 4 }),
        fc.option(
          decimalArb(4, { min: 0n }).map((t) => (Math.abs(Number(t)) > 100 ? '100' : t.replace('-', ''))),
          {
            nil: null,
          },
        ),
        fc.context(),
        (q, e, t, ctx) => {
          // The price has at most the currency's decimals (what the API lets through).
          const p = fc.sample(decimalArb(e), { numRuns: 1, seed: q.length * 7919 + e })[0];
          ctx.log(`${q} × ${p} @ ${t}% e=${e}`);
          const got = lineAmounts(
            toScaled(JSON.parse(q), QUANTITY_SCALE),
            toScaled(JSON.parse(p), MONEY_SCALE),
            t === null ? null : toScaled(JSON.parse(t), PERCENT_SCALE),
            e,
          );
          const ref = reference(q, p, t, e);
          const unit = 10n ** BigInt(MONEY_SCALE - e);
          const limit = 1_000_000_000n * 10n ** BigInt(e);
          const abs = (v: bigint) => (v < 0n ? -v : v);
          const inRange = abs(ref.subtotal) <= limit && abs(ref.total) <= limit;
          // Past the bounds the line is refused (the API's failure naming quantity or lines).
          assert.equal(withinLimit(got.subtotal) && withinLimit(got.total), inRange);
          if (!inRange) return;
          assert.equal(BigInt(got.subtotal), ref.subtotal * unit);
          assert.equal(BigInt(got.tax), ref.tax * unit);
          assert.equal(BigInt(got.total), ref.total * unit);
        },
      ),
      { numRuns: 5000 },
    );
  });
});
