import fc from 'fast-check';
import type { Collection } from '../src/collections/machinery/collection.js';
import { CMP_OPS } from '../src/collections/machinery/where.js';

/**
 * Hostile input for property-based tests (fast-check). Bodies are built as JSON text by hand so
 * they can hold what a JavaScript value cannot express safely: own `__proto__` keys, duplicate
 * keys, `-0`, integers past 2^53, nesting deeper than any recursive walker survives.
 */

/** A fixed seed (printed by the tests) so a failure replays; FSM_FC_SEED picks another. */
export const SEED = Number(process.env.FSM_FC_SEED ?? 20_240_917);
/** FSM_FC_SCALE multiplies the number of runs (0.2 for a quick look, 10 for a long hunt). */
export const runs = (n: number) => Math.max(1, Math.round(n * Number(process.env.FSM_FC_SCALE ?? 1)));

/** JSON as text: raw tokens, or objects as entry lists (keys may repeat or be `__proto__`). */
export class Raw {
  constructor(readonly text: string) {}
}
export type J = null | boolean | number | string | Raw | J[] | { entries: [string, J][] };

export function toJson(v: J): string {
  if (v instanceof Raw) return v.text;
  if (Array.isArray(v)) return `[${v.map(toJson).join(',')}]`;
  if (v !== null && typeof v === 'object')
    return `{${v.entries.map(([k, x]) => `${JSON.stringify(k)}:${toJson(x)}`).join(',')}}`;
  return JSON.stringify(v);
}

/** The value once in `one_in` draws, else null. */
export const rarely = <T>(arb: fc.Arbitrary<T>, oneIn = 4): fc.Arbitrary<T | null> =>
  fc.oneof({ weight: oneIn - 1, arbitrary: fc.constant(null) }, { weight: 1, arbitrary: arb });

export const obj = (entries: [string, J][]): J => ({ entries });
const isObj = (v: J): v is { entries: [string, J][] } =>
  v !== null && typeof v === 'object' && !Array.isArray(v) && !(v instanceof Raw);

export const POLLUTING_KEYS = ['__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty', 'valueOf'];

/**
 * Integers at and past the storage edges, as JSON text: int4 (ids are PostgreSQL `serial`),
 * 2^53 (past which a double is no longer exact), int8 (2^63), and their negatives.
 */
export const INTEGER_EDGES = [
  '0',
  '1',
  '-1',
  '2147483647',
  '2147483648',
  '-2147483648',
  '-2147483649',
  '4294967296',
  '9007199254740991',
  '9007199254740992',
  '9007199254740993',
  '-9007199254740993',
  '9223372036854775807',
  '9223372036854775808',
  '-9223372036854775808',
  '-9223372036854775809',
  '18446744073709551616',
  '2147483647999',
  '123456789012345678901234567890',
];
/** An integer at or past an edge, as JSON text (exactly as a client may send it). */
export const edgeInteger: fc.Arbitrary<Raw> = fc
  .oneof(
    { weight: 3, arbitrary: fc.constantFrom(...INTEGER_EDGES) },
    // Around each power of two that matters, a few steps either side.
    {
      weight: 1,
      arbitrary: fc
        .tuple(fc.constantFrom(31n, 32n, 53n, 63n, 64n), fc.integer({ min: -2, max: 2 }), fc.boolean())
        .map(([p, d, neg]) => String((neg ? -1n : 1n) * (2n ** p + BigInt(d)))),
    },
  )
  .map((t) => new Raw(t));

/** Numbers at the edges, some only expressible as raw JSON text. */
export const edgeNumber: fc.Arbitrary<J> = fc.oneof(
  fc.constantFrom<J>(
    0,
    1,
    -1,
    1e308,
    -1e308,
    5e-324,
    2 ** 31,
    2 ** 31 - 1,
    -(2 ** 31) - 1,
    2 ** 53 - 1,
    0.1,
    1.5,
    10,
    100,
  ),
  fc.constantFrom<J>(
    new Raw('-0'),
    new Raw('9007199254740993'),
    new Raw('-9007199254740993'),
    new Raw('1e309'),
    new Raw('-1e400'),
    new Raw('1E2'),
    new Raw('123456789012345678901234567890'),
  ),
  edgeInteger,
  fc.integer().map((n): J => n),
  fc.double({ noNaN: true, noDefaultInfinity: true }).map((n): J => n),
);

/** Strings: unicode, control characters, SQL and pattern meta-characters, very long ones. */
export const hostileString: fc.Arbitrary<string> = fc.oneof(
  { weight: 4, arbitrary: fc.string({ unit: 'binary', maxLength: 40 }) },
  { weight: 2, arbitrary: fc.string({ unit: 'grapheme', maxLength: 20 }) },
  {
    weight: 3,
    arbitrary: fc.constantFrom(
      '',
      ' ',
      "'",
      '"',
      '\\',
      '%',
      '_',
      "' or 1=1 --",
      '"; drop table users; --',
      '\u0000',
      '\ud800',
      '\udfff',
      '\u202e',
      'null',
      'true',
      '😀',
      'e\u0301',
      'İ',
      'ß',
      '#00FF00',
      '+447700900123',
      'a@b.co',
      '2024-02-29',
      '2024-02-30',
      '2024-01-01T10:00:00Z',
      '2024-01-01T10:00:00+14:00',
      '9999-12-31T23:59:59.999999999-23:59',
      'low',
      'urgent',
      'new',
      'scheduled',
      '__proto__',
      'J-000001',
    ),
  },
  { weight: 1, arbitrary: fc.constantFrom(10_001, 70_000, 300_000).map((n) => 'x'.repeat(n)) },
);

/** Any JSON value, some of them nasty, nested a few levels. */
export const hostileValue: fc.Arbitrary<J> = fc.letrec<{ v: J }>((tie) => ({
  v: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    { weight: 3, arbitrary: hostileString.map((s): J => s) },
    { weight: 3, arbitrary: edgeNumber },
    { weight: 1, arbitrary: fc.constantFrom<J>(null, true, false) },
    { weight: 1, arbitrary: fc.array(tie('v'), { maxLength: 4 }) },
    {
      weight: 1,
      arbitrary: fc
        .array(fc.tuple(fc.oneof(fc.constantFrom('id', ...POLLUTING_KEYS), fc.string({ maxLength: 8 })), tie('v')), {
          maxLength: 4,
        })
        .map(obj),
    },
    { weight: 1, arbitrary: edgeNumber.map((id) => obj([['id', id]])) },
    {
      weight: 1,
      arbitrary: fc
        .constantFrom(1, 5, 58, 400, 20_000, 200_000)
        .map((n) => new Raw(`${'['.repeat(n)}${']'.repeat(n)}`)),
    },
    {
      weight: 1,
      arbitrary: fc
        .constantFrom(2, 58, 400, 20_000, 100_000)
        .map((n) => new Raw(`${'{"a":'.repeat(n)}1${'}'.repeat(n)}`)),
    },
  ),
})).v;

/** A value that may pass a field's schema (so writes reach the database), or may not. */
function plausible(c: Collection, name: string, ids: number[]): fc.Arbitrary<J> {
  const field = c.fields[name];
  const id = fc.oneof(
    fc.constantFrom<J>(...(ids.length ? ids : [1])),
    fc.constantFrom<J>(0, -1, 2 ** 31, 2 ** 53 - 1),
    edgeInteger,
  );
  switch (field.kind) {
    case 'assoc':
      return fc.oneof(
        id.map((i) => obj([['id', i]])),
        fc.constant<J>(null),
      );
    case 'assocList':
      return fc.array(
        id.map((i) => obj([['id', i]])),
        { maxLength: 3 },
      );
    case 'object':
      return fc
        .subarray(Object.keys(field.members))
        .chain((ms) =>
          fc.tuple(
            ...ms.map((m) =>
              fc.tuple(
                fc.constant(m),
                hostileString.map((s): J => s),
              ),
            ),
          ),
        )
        .map((es) => obj(es as [string, J][]));
    case 'scalar':
      if (field.type === 'boolean') return fc.boolean();
      if (field.type === 'flag') return fc.constantFrom(0, 1);
      if (field.type === 'integer' || field.type === 'number') return edgeNumber;
      return hostileString.filter((s) => s.length < 300).map((s): J => s);
    default:
      return hostileString.map((s): J => s);
  }
}

/** One write item for a collection: mostly its own members (plausible or hostile values) and some strangers. */
export function itemOf(c: Collection, ids: number[]): fc.Arbitrary<J> {
  const names = Object.keys(c.fields);
  const key = fc.oneof(
    { weight: 6, arbitrary: fc.constantFrom(...names) },
    { weight: 1, arbitrary: fc.constantFrom('id', ...POLLUTING_KEYS) },
    { weight: 1, arbitrary: fc.string({ unit: 'grapheme', maxLength: 10 }) },
  );
  const entry = key.chain((k) =>
    fc.tuple(
      fc.constant(k),
      k === 'id'
        ? fc.oneof(fc.constantFrom(...(ids.length ? ids : [1])), edgeNumber)
        : names.includes(k)
          ? fc.oneof(plausible(c, k, ids), hostileValue)
          : hostileValue,
    ),
  );
  return fc.oneof(
    { weight: 8, arbitrary: fc.array(entry, { maxLength: 8 }).map(obj) },
    { weight: 1, arbitrary: hostileValue },
  );
}

/** A whole write body for a collection: usually `{name: [items]}`, sometimes anything else. */
export function bodyOf(c: Collection, ids: number[], otherNames: string[]): fc.Arbitrary<string> {
  const items = fc.oneof(
    { weight: 6, arbitrary: fc.array(itemOf(c, ids), { minLength: 1, maxLength: 5 }) },
    // Duplicate ids in one batch.
    {
      weight: 2,
      arbitrary: fc
        .constantFrom(...(ids.length ? ids : [1]))
        .chain((id) =>
          fc
            .array(itemOf(c, ids), { minLength: 2, maxLength: 3 })
            .map((its) => its.map((it) => (isObj(it) ? obj([['id', id], ...it.entries]) : it))),
        ),
    },
    { weight: 1, arbitrary: fc.constant<J[]>([]) },
  );
  return fc.oneof(
    { weight: 10, arbitrary: items.map((its) => toJson(obj([[c.name, its]]))) },
    {
      weight: 1,
      arbitrary: fc
        .tuple(fc.constantFrom(...otherNames, '__proto__', 'constructor'), items)
        .map(([k, its]) => toJson(obj([[k, its]]))),
    },
    {
      weight: 1,
      arbitrary: items.map((its) =>
        toJson(
          obj([
            [c.name, its],
            ['__proto__', obj([['polluted', true]])],
          ]),
        ),
      ),
    },
    { weight: 1, arbitrary: hostileValue.map(toJson) },
    { weight: 1, arbitrary: fc.string({ maxLength: 30 }) },
    {
      weight: 1,
      arbitrary: fc.constantFrom('x'.repeat(1024 * 1024 + 10), `{"${c.name}":[{"a":"${'y'.repeat(1024 * 1024)}"}]}`),
    },
  );
}

/** `where` expressions: valid by the grammar over a collection's real columns, mutated, or junk. */
export function whereOf(c: Collection): fc.Arbitrary<string> {
  const fields = [...c.columns.keys()];
  const op = fc.constantFrom(...CMP_OPS);
  const value = fc.oneof(
    fc
      .tuple(
        hostileString.filter((s) => s.length < 200),
        fc.boolean(),
      )
      .map(([s, dq]) => (dq ? `"${s.replace(/["\\]/g, '\\$&')}"` : `'${s.replace(/['\\]/g, '\\$&')}'`)),
    edgeNumber.map((n) => (n instanceof Raw ? n.text : JSON.stringify(n))),
    fc.constantFrom('true', 'false', 'null', '"2024-01-01T00:00:00Z"', '1e308', '-0', '9007199254740993', '1e999'),
  );
  const quoted = (s: string) => `"${s.replace(/["\\]/g, '\\$&')}"`;
  // A value of the column's own type, so the expression reaches the database with hostile values.
  const typed = (name: string): fc.Arbitrary<string> => {
    const type = c.columns.get(name)!.type;
    if (type === 'integer' || type === 'flag')
      return fc.oneof(
        fc.integer().map(String),
        fc.constantFrom(2 ** 53 - 1, -(2 ** 53) + 1, 0).map(String),
        edgeInteger.map((r) => r.text),
      );
    if (type === 'number')
      return fc
        .oneof(fc.double({ noNaN: true, noDefaultInfinity: true }), fc.constantFrom(1e308, -1e308, 5e-324))
        .map((n) => JSON.stringify(n));
    if (type === 'boolean') return fc.constantFrom('true', 'false', 'null');
    if (type === 'time')
      return fc.oneof(
        fc.date({ noInvalidDate: true }).map((d) => quoted(d.toISOString())),
        fc.constantFrom('"0000-01-01T00:00:00Z"', '"+275760-09-13T00:00:00Z"', '"2024-02-30T25:61:00+99:99"'),
      );
    return fc.oneof(hostileString.filter((s) => s.length < 200).map(quoted), fc.constant('null'));
  };
  const typedTerm = fc
    .constantFrom(...fields)
    .chain((f) => fc.tuple(fc.constant(f), op, typed(f)))
    .map(([f, o, v]) => `${f} ${o} ${v}`);
  const anyTerm = fc
    .tuple(
      fc.oneof(
        { weight: 5, arbitrary: fc.constantFrom(...fields) },
        { weight: 1, arbitrary: fc.string({ maxLength: 8 }) },
      ),
      op,
      value,
    )
    .map(([f, o, v]) => `${f} ${o} ${v}`);
  const term = fc.oneof({ weight: 2, arbitrary: typedTerm }, { weight: 1, arbitrary: anyTerm });
  const expr: fc.Arbitrary<string> = fc.letrec<{ e: string }>((tie) => ({
    e: fc.oneof(
      { depthSize: 'small', withCrossShrink: true },
      { weight: 4, arbitrary: term },
      {
        weight: 1,
        arbitrary: fc
          .tuple(tie('e'), fc.constantFrom(' and ', ' or ', ' AND ', ' Or '), tie('e'))
          .map(([a, j, b]) => a + j + b),
      },
      { weight: 1, arbitrary: tie('e').map((e) => `(${e})`) },
    ),
  })).e;
  return fc.oneof(
    { weight: 6, arbitrary: expr },
    // Mutations: a character dropped, doubled or swapped for a meta-character.
    {
      weight: 2,
      arbitrary: fc
        .tuple(expr, fc.nat(), fc.constantFrom('', '(', ')', '"', "'", '\\', '!', ' and ', '\u0000', '~~'))
        .map(([e, i, s]) => e.slice(0, i % (e.length + 1)) + s + e.slice((i % (e.length + 1)) + 1)),
    },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        '('.repeat(40) + 'id = 1' + ')'.repeat(40),
        Array(70).fill('id = 1').join(' or '),
        'x'.repeat(5000),
        '',
      ),
    },
    { weight: 1, arbitrary: hostileString.filter((s) => s.length < 5000) },
  );
}

export const fieldsOf = (c: Collection): fc.Arbitrary<string> => {
  const names = [...Object.keys(c.fields), 'id', '*', '[*]', ...[...c.columns.keys()].filter((k) => k.includes('.'))];
  return fc.oneof(
    {
      weight: 4,
      arbitrary: fc
        .array(
          fc.oneof(
            fc.constantFrom(...names),
            fc
              .tuple(fc.constantFrom(...names), fc.constantFrom('id', 'name', 'x', '*', ''))
              .map(([n, m]) => `${n}.${m}`),
          ),
          { maxLength: 6 },
        )
        .map((xs) => xs.join(',')),
    },
    { weight: 1, arbitrary: hostileString.filter((s) => s.length < 5000) },
  );
};

export const sortOf = (c: Collection): fc.Arbitrary<string> => {
  const names = [...c.columns.keys(), ...Object.keys(c.fields)];
  return fc.oneof(
    {
      weight: 4,
      arbitrary: fc
        .array(
          fc.tuple(fc.constantFrom('', '-', '+', '--'), fc.constantFrom(...names)).map(([s, n]) => s + n),
          { maxLength: 4 },
        )
        .map((xs) => xs.join(',')),
    },
    { weight: 1, arbitrary: hostileString.filter((s) => s.length < 5000) },
  );
};

export const pageValue: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(
    '1',
    '2',
    '0',
    '-1',
    '1.5',
    '1e3',
    ' 1',
    '01',
    '999999999',
    '1000000000',
    '1000000001',
    '99999999999999999999',
    'NaN',
    '',
    'null',
    '0x10',
    '1000',
    '1001',
  ),
  fc.nat().map(String),
  hostileString.filter((s) => s.length < 100),
);

/** A list query: known modifiers (sometimes repeated or unknown ones), URL-encoded. */
export function listQueryOf(c: Collection): fc.Arbitrary<string> {
  const param = fc.oneof(
    fc.tuple(fc.constant('where'), whereOf(c)),
    fc.tuple(fc.constant('fields'), fieldsOf(c)),
    fc.tuple(fc.constant('sort'), sortOf(c)),
    fc.tuple(fc.constantFrom('page', 'recordsPerPage'), pageValue),
    fc.tuple(
      fc.constantFrom('limit', '__proto__', 'constructor', 'where[x]', 'page[]', ''),
      hostileString.filter((s) => s.length < 100),
    ),
  );
  const raw = fc.constantFrom(
    'where=%FF%FE',
    'fields=%',
    'sort=%E0%A4%A',
    'where=id%20=%201&where=id%20=%202',
    'page=1&page=2',
    '&&&',
    '=x',
    'where',
  );
  return fc
    .tuple(fc.array(param, { maxLength: 3 }), rarely(raw, 8))
    .map(([ps, r]) => [...ps.map(([k, v]) => `${pct(k)}=${pct(v)}`), ...(r ? [r] : [])].join('&'));
}

/** Percent-encodes the UTF-8 bytes of a string (lone surrogates become U+FFFD, as a browser sends them). */
export const pct = (s: string): string =>
  [...new TextEncoder().encode(s)]
    .map((b) =>
      /[A-Za-z0-9\-_.~]/.test(String.fromCharCode(b))
        ? String.fromCharCode(b)
        : `%${b.toString(16).toUpperCase().padStart(2, '0')}`,
    )
    .join('');
