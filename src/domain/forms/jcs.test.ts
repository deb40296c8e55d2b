import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { canonicalJson } from './jcs.js';

/** RFC 8785's own examples: §3.2.4's whole object, §3.2.3's sort order, Appendix B's numbers. */
describe('RFC 8785 canonical JSON', () => {
  it('the example of §3.2.4', () => {
    const input = JSON.parse(
      String.raw`{"numbers": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001],
        "string": "\u20ac$\u000F\u000aA'\u0042\u0022\u005c\\\"\/", "literals": [null, true, false]}`,
    );
    assert.equal(
      canonicalJson(input),
      String.raw`{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],"string":"€$\u000f\nA'B\"\\\\\"/"}`,
    );
  });

  it('sorts members by UTF-16 code units (§3.2.3)', () => {
    const input = JSON.parse(
      String.raw`{"\u20ac": "Euro Sign", "\r": "Carriage Return", "\ufb33": "Hebrew Letter Dalet With Dagesh",
        "1": "One", "\ud83d\ude00": "Emoji: Grinning Face", "\u0080": "Control", "\u00f6": "Latin Small Letter O With Diaeresis"}`,
    );
    const keys = Object.keys(JSON.parse(canonicalJson(input)) as object);
    // JSON.parse puts the integer-like "1" first whatever the text says: compare the text's order.
    const order = [...canonicalJson(input).matchAll(/"((?:[^"\\]|\\.)*)":/g)].map((m) => JSON.parse(`"${m[1]}"`));
    assert.deepEqual(order, ['\r', '1', '\u0080', '\u00f6', '\u20ac', '\ud83d\ude00', '\ufb33']);
    assert.equal(keys.length, 7);
  });

  it("serializes Appendix B's IEEE 754 values", () => {
    const cases: [string, string][] = [
      ['0000000000000000', '0'],
      ['8000000000000000', '0'],
      ['0000000000000001', '5e-324'],
      ['8000000000000001', '-5e-324'],
      ['7fefffffffffffff', '1.7976931348623157e+308'],
      ['ffefffffffffffff', '-1.7976931348623157e+308'],
      ['4340000000000000', '9007199254740992'],
      ['c340000000000000', '-9007199254740992'],
      ['4430000000000000', '295147905179352830000'],
      ['44b52d02c7e14af5', '9.999999999999997e+22'],
      ['44b52d02c7e14af6', '1e+23'],
      ['44b52d02c7e14af7', '1.0000000000000001e+23'],
      ['444b1ae4d6e2ef4e', '999999999999999700000'],
      ['444b1ae4d6e2ef4f', '999999999999999900000'],
      ['444b1ae4d6e2ef50', '1e+21'],
      ['3eb0c6f7a0b5ed8c', '9.999999999999997e-7'],
      ['3eb0c6f7a0b5ed8d', '0.000001'],
      ['41b3de4355555553', '333333333.3333332'],
      ['41b3de4355555554', '333333333.33333325'],
      ['41b3de4355555555', '333333333.3333333'],
      ['41b3de4355555556', '333333333.3333334'],
      ['41b3de4355555557', '333333333.33333343'],
      ['becbf647612f3696', '-0.0000033333333333333333'],
      ['43143ff3c1cb0959', '1424953923781206.2'],
    ];
    for (const [bits, text] of cases) {
      const n = Buffer.from(bits, 'hex').readDoubleBE(0);
      assert.equal(canonicalJson(n), text, bits);
    }
    for (const bits of ['7fffffffffffffff', '7ff0000000000000'])
      assert.throws(() => canonicalJson(Buffer.from(bits, 'hex').readDoubleBE(0)), RangeError);
  });

  it('refuses a lone surrogate; nests arrays and objects without whitespace', () => {
    assert.throws(() => canonicalJson('\ud800'), RangeError);
    assert.equal(canonicalJson({ b: [1, { d: 2, c: 'x' }], a: {} }), '{"a":{},"b":[1,{"c":"x","d":2}]}');
  });
});
