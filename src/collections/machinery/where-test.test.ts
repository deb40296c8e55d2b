import { test } from 'node:test';
import assert from 'node:assert/strict';
import { registry } from '../index.js';
import { whereTest } from './filter.js';
import { parseWhere } from './where.js';

/** The in-memory reading of a `where` (the event stream's) comes from the same tree and column rules as its SQL. */
const events = registry.get('events')!;
const jobs = registry.get('jobs')!;
const ONLY = new Set(['collection']);
const testOf = (w: string, columns: ReadonlySet<string> = ONLY) => whereTest(events, parseWhere(w), columns);

test('= and != of a string on a carried non-null text column, joined by and/or, are decided in memory', () => {
  const is = testOf('collection = "visits"')!;
  assert.equal(is({ collection: 'visits' }), true);
  assert.equal(is({ collection: 'jobs' }), false);
  const not = testOf('collection != "visits"')!;
  assert.equal(not({ collection: 'visits' }), false);
  assert.equal(not({ collection: 'jobs' }), true);
  const either = testOf('collection = "visits" or collection = "jobs"')!;
  assert.deepEqual(
    ['visits', 'jobs', 'notes'].map((collection) => either({ collection })),
    [true, true, false],
  );
  const both = testOf('collection != "visits" and collection != "jobs"')!;
  assert.deepEqual(
    ['visits', 'jobs', 'notes'].map((collection) => both({ collection })),
    [false, false, true],
  );
  // Exact, as the database compares text: no case folding, no trimming.
  assert.equal(is({ collection: 'Visits' }), false);
  assert.equal(is({ collection: 'visits ' }), false);
});

test('anything else is left to the database: other operators, columns the rows lack, non-strings, unknown or nullable fields', () => {
  for (const w of [
    'collection ~ "vis"',
    'collection > "a"',
    'collection = 3',
    'collection = null',
    'type = "jobs.created"',
    'collection = "visits" and type = "visits.created"',
    'collection = "visits" or id > 3',
    'nosuchfield = "x"',
  ])
    assert.equal(testOf(w), undefined, w);
  // A nullable text column is the database's too (its `!=` also takes null rows).
  const nullableText = [...jobs.columns.values()].find(
    (col) => col.nullable && !col.expr && col.type === 'string' && !col.ops,
  )!;
  assert.ok(nullableText, 'jobs have a nullable text column');
  const name = [...jobs.columns].find(([, col]) => col === nullableText)![0];
  assert.equal(whereTest(jobs, parseWhere(`${name} = "x"`), new Set([nullableText.column])), undefined);
  // Carried, the same term on a non-null column is decided in memory (control).
  assert.ok(testOf('type = "jobs.created"', new Set(['collection', 'type'])));
});
