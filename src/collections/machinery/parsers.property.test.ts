import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { DummyDriver, Kysely, SqliteAdapter, SqliteIntrospector, SqliteQueryCompiler } from 'kysely';
import { ApiError } from '../../errors.js';
import { registry } from '../index.js';
import { whereToSql } from './filter.js';
import { SQLITE } from '../../db/dialect.js';
import { attach, newShared } from '../../db/runner.js';
import { parseFields, parseListQuery, MAX_PAGE_SIZE } from './modifiers.js';
import { parseWhere, type WhereNode } from './where.js';
import { SEED, edgeInteger, fieldsOf, pageValue, runs, sortOf, whereOf } from '../../../test/arbitraries.js';

/**
 * Property-based tests of the query-modifier parsers with hostile input (unit level; the same
 * input goes through the real app in test/hostile-input.test.ts). A parser either returns a
 * result or throws the one client error (400, code 1002); never anything else.
 */
const all = [...registry.list];
// Drawn by name so a counterexample prints short; mapped back to the collection.
const collection = fc.constantFrom(...all.map((c) => c.name)).map(
  (n) => registry.get(n)!,
  (c) => (c as { name: string }).name,
);
const params = (numRuns: number) => ({ seed: SEED, numRuns: runs(numRuns) });
let cases = 0;

function badModifierOnly(fn: () => void): void {
  try {
    fn();
  } catch (err) {
    if (!(err instanceof ApiError) || err.status !== 400 || err.body.code !== 1002) throw err;
  }
}

// Compiles without a database: the SQL text only.

const compiler = new Kysely<any>({
  dialect: {
    createAdapter: () => new SqliteAdapter(),
    createDriver: () => new DummyDriver(),
    createIntrospector: (db) => new SqliteIntrospector(db),
    createQueryCompiler: () => new SqliteQueryCompiler(),
  },
});
// A compiler only: attached to a dialect so the machinery can ask it its questions.
attach(compiler, newShared(SQLITE));

test(`where: hostile expressions parse or fail with 1002, and no value reaches the SQL text (seed ${SEED})`, (t) => {
  fc.assert(
    fc.property(
      collection.chain((c) => fc.tuple(fc.constant(c), whereOf(c))),
      ([c, src]) => {
        cases++;
        badModifierOnly(() => {
          const tree = parseWhere(src);
          const q = compiler
            .selectFrom(c.table)
            .selectAll()
            .where((eb) => whereToSql(c, tree, eb, compiler))
            .compile();
          const values: string[] = [];
          const walk = (n: WhereNode): void =>
            n.type === 'cmp'
              ? void (typeof n.value === 'string' && values.push(n.value))
              : (walk(n.left), walk(n.right));
          walk(tree);
          for (const v of values) {
            if (v.length >= 3 && /['";-]/.test(v)) assert.ok(!q.sql.includes(v), `value spliced into SQL: ${q.sql}`);
          }
        });
      },
    ),
    params(1200),
  );
  t.diagnostic(`cases so far: ${cases}`);
});

/** A tree over real columns, rendered fully parenthesized, must parse back to itself. */
const leaf = (c: (typeof all)[number]) =>
  fc.record({
    type: fc.constant('cmp' as const),
    field: fc.constantFrom(...c.columns.keys()),
    op: fc.constantFrom('~', '!~', '=', '!=', '<', '<=', '>', '>=' as const),
    value: fc.oneof(
      fc.string({ unit: 'grapheme', maxLength: 12 }),
      fc.integer(),
      fc.double({ noNaN: true, noDefaultInfinity: true, min: -1e300, max: 1e300 }),
      fc.boolean(),
      fc.constant(null),
    ),
  });
const treeOf = (c: (typeof all)[number]): fc.Arbitrary<WhereNode> =>
  fc.letrec<{ n: WhereNode }>((tie) => ({
    n: fc.oneof(
      { depthSize: 'small', maxDepth: 5 },
      leaf(c) as fc.Arbitrary<WhereNode>,
      fc.record({
        type: fc.constantFrom('and' as const, 'or' as const),
        left: tie('n'),
        right: tie('n'),
      }) as fc.Arbitrary<WhereNode>,
    ),
  })).n;
function render(n: WhereNode): string {
  if (n.type !== 'cmp') return `(${render(n.left)} ${n.type} ${render(n.right)})`;
  const v =
    typeof n.value === 'string'
      ? `"${n.value.replace(/["\\]/g, '\\$&')}"`
      : n.value === null
        ? 'null'
        : String(n.value);
  return `${n.field} ${n.op} ${v}`;
}
const terms = (n: WhereNode): number => (n.type === 'cmp' ? 1 : terms(n.left) + terms(n.right));
const normalize = (n: WhereNode): WhereNode =>
  n.type === 'cmp'
    ? { ...n, value: Object.is(n.value, -0) ? 0 : n.value }
    : { ...n, left: normalize(n.left), right: normalize(n.right) };

test(`where: every well-formed expression parses back to its tree (seed ${SEED})`, () => {
  fc.assert(
    fc.property(
      collection.chain((c) => treeOf(c)),
      (tree) => {
        cases++;
        fc.pre(terms(tree) <= 64);
        assert.deepEqual(parseWhere(render(tree)), normalize(tree));
      },
    ),
    params(600),
  );
});

test(`fields, sort and paging: hostile values give a sane query or 1002; write-only fields are never projected (seed ${SEED})`, (t) => {
  const modifier = fc.oneof(
    fc.string({ maxLength: 10 }),
    fc.array(fc.string({ maxLength: 5 }), { minLength: 2, maxLength: 3 }),
  );
  const query = collection.chain((c) =>
    fc.tuple(
      fc.constant(c),
      fc.record(
        {
          fields: fieldsOf(c),
          sort: sortOf(c),
          page: pageValue,
          recordsPerPage: pageValue,
          where: whereOf(c),
          junk: modifier,
        },
        { requiredKeys: [] },
      ),
    ),
  );
  fc.assert(
    fc.property(query, ([c, q]) => {
      cases++;
      const query: Record<string, unknown> = { ...q };
      if ('junk' in query) {
        // An unknown parameter, or a known one given twice (an array, as the query parser makes it).
        query[Array.isArray(query.junk) ? 'sort' : 'unknown'] = query.junk;
        delete query.junk;
      }
      badModifierOnly(() => {
        const r = parseListQuery(c, query);
        assert.ok(Number.isSafeInteger(r.page) && r.page >= 1);
        assert.ok(Number.isSafeInteger(r.recordsPerPage) && r.recordsPerPage >= 1 && r.recordsPerPage <= MAX_PAGE_SIZE);
        assert.ok(r.sort.some((s) => s.column === 'id'));
        for (const s of r.sort) assert.ok([...c.columns.values()].some((col) => col.column === s.column));
        for (const f of r.projection.fields) assert.ok(c.allFields.includes(f), `projected ${f}`);
      });
      badModifierOnly(() => {
        const p = parseFields(c, q.fields);
        for (const f of p.fields) assert.notEqual(c.fields[f].kind, 'writeOnly');
      });
    }),
    params(1200),
  );
  t.diagnostic(`seed ${SEED}; property cases run in this file: ${cases}`);
});

test(`where: an integer column takes exactly the values it can store, whatever the dialect (seed ${SEED})`, () => {
  const intColumns = all.flatMap((c) =>
    [...c.columns]
      .filter(([, col]) => col.type === 'integer' || col.type === 'flag')
      .map(([name, col]) => ({ c, name, col })),
  );
  fc.assert(
    fc.property(
      fc.constantFrom(...intColumns.map((_, i) => i)),
      edgeInteger,
      fc.constantFrom('=', '!=', '<', '>='),
      (i, edge, op) => {
        cases++;
        const { c, name, col } = intColumns[i];
        const v = BigInt(edge.text);
        const [min, max] = col.wide ? [-(2n ** 53n) + 1n, 2n ** 53n - 1n] : [-(2n ** 31n), 2n ** 31n - 1n];
        const compile = () =>
          compiler
            .selectFrom(c.table)
            .selectAll()
            .where((eb) => whereToSql(c, parseWhere(`${name} ${op} ${edge.text}`), eb, compiler))
            .compile();
        if (v >= min && v <= max) compile();
        else
          assert.throws(
            compile,
            (e: unknown) =>
              e instanceof ApiError && e.body.code === 1002 && e.body.message.includes(`from ${min} to ${max}`),
          );
      },
    ),
    params(600),
  );
});
