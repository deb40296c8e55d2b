import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import pg from 'pg';
import { PG_URL, skipUnless } from '../../test/helpers.js';
import { describedOnceSupport, namedRunner, runNamed } from './described.js';
import { openDatabase } from './index.js';
import { query as runQuery, slot } from './runner.js';

/** Counts the Describe messages a client sends (pg's connection writes one per call). */
function countDescribes(client: pg.ClientBase): { count: number } {
  const connection = (client as unknown as { connection: { describe(msg: unknown): void } }).connection;
  const counter = { count: 0 };
  const describeOnce = connection.describe.bind(connection);
  connection.describe = (msg) => {
    counter.count++;
    describeOnce(msg);
  };
  return counter;
}

const TEXT = `select $1::int8 as big, $2::text as label, $3::jsonb as doc, $4::int as maybe, now() - now() as zero`;

describe('named statements described once per connection (PostgreSQL)', { skip: skipUnless('postgres') }, () => {
  let client: pg.Client;
  let query: (q: object) => unknown;
  before(async () => {
    client = new pg.Client(PG_URL);
    await client.connect();
    query = client.query.bind(client) as (q: object) => unknown;
  });
  after(() => client?.end());

  test('later executions send no Describe and parse their rows as pg does', async () => {
    const describes = countDescribes(client);
    const cases: unknown[][] = [
      [1, 'one', '{"a":1}', null],
      ['9007199254740993', 'two', '[1,2]', 7],
      [-5, null, null, null],
    ];
    for (const values of cases) {
      const named = await runNamed(query, { name: 'described_1', text: TEXT, values });
      const plain = await client.query(TEXT, values);
      assert.deepEqual(named.rows, plain.rows);
      assert.equal(named.rowCount, 1);
      assert.equal(named.command, 'SELECT');
    }
    // One Describe for the named statement's first execution, one for each plain query.
    assert.equal(describes.count, 1 + cases.length);
  });

  test('a statement that found nothing the first time reads rows later', async () => {
    const text = 'select g as n, g::text as s from generate_series(1, $1::int) g';
    assert.deepEqual((await runNamed(query, { name: 'described_2', text, values: [0] })).rows, []);
    assert.deepEqual((await runNamed(query, { name: 'described_2', text, values: [2] })).rows, [
      { n: 1, s: '1' },
      { n: 2, s: '2' },
    ]);
  });

  test('errors of a described statement fail that query alone', async () => {
    const text = 'select 10 / $1::int as q';
    assert.deepEqual((await runNamed(query, { name: 'described_3', text, values: [2] })).rows, [{ q: 5 }]);
    await assert.rejects(runNamed(query, { name: 'described_3', text, values: [0] }), /division by zero/);
    // A value pg cannot send: the bind fails before anything is written.
    const unsendable = {
      toPostgres: () => {
        throw new Error('cannot send this');
      },
    };
    await assert.rejects(runNamed(query, { name: 'described_3', text, values: [unsendable] }), /cannot send this/);
    assert.deepEqual((await runNamed(query, { name: 'described_3', text, values: [5] })).rows, [{ q: 2 }]);
    // The same on a statement's first execution: pg alone would close the statement it had just
    // parsed yet keep it as parsed, and the next execution would fail ("does not exist").
    const circular: Record<string, unknown> = {};
    circular.self = circular;
    await assert.rejects(
      runNamed(query, { name: 'described_5', text: 'select $1::jsonb as j', values: [circular] }),
      /circular/i,
    );
    assert.deepEqual(
      (await runNamed(query, { name: 'described_5', text: 'select $1::jsonb as j', values: [{ a: 1 }] })).rows,
      [{ j: { a: 1 } }],
    );
  });

  test('a changed result shape is refused by PostgreSQL, never read with the old description', async () => {
    await client.query('create temp table described_shape (a int)');
    await client.query('insert into described_shape values (1)');
    const text = 'select * from described_shape where a = $1';
    assert.deepEqual((await runNamed(query, { name: 'described_4', text, values: [1] })).rows, [{ a: 1 }]);
    await client.query(`alter table described_shape add column b text default 'x'`);
    await assert.rejects(
      runNamed(query, { name: 'described_4', text, values: [1] }),
      /cached plan must not change result type/,
    );
  });

  test("the server's pool runs its compiled queries this way", async () => {
    const database = openDatabase({ databaseUrl: PG_URL, poolSize: 1 });
    const counters: { count: number }[] = [];
    database.pool!.on('connect', (c) => counters.push(countDescribes(c)));
    try {
      const build = () =>
        database.db.selectNoFrom((eb) => eb.cast<number>(eb.val(slot<number>('n')), 'integer').as('n'));
      for (const n of [1, 2, 3, 4])
        assert.deepEqual(await runQuery(database.db, 'described test', build, { n }), [{ n }]);
      assert.equal(counters.length, 1);
      // The connection's own setup query is a simple query (no Describe); the statement's first run describes.
      assert.equal(counters[0].count, 1);
    } finally {
      await database.close();
    }
  });

  test('a pg without the members it takes over is detected, and its statements run as pg runs them', async () => {
    const utils = () => createRequire(import.meta.url)('pg/lib/utils');
    // The pinned pg has them all.
    assert.ok(describedOnceSupport(pg, utils));
    // Each missing piece alone turns the trick off: no utils module, no prepareValue, a Query without
    // a step, a Result without the members the description is kept in.
    class NoSteps {}
    class NoResult extends (pg.Query as unknown as new (c: object) => object) {
      constructor(c: object) {
        super(c);
        (this as Record<string, unknown>)._result = {};
      }
    }
    const missing: [string, { Query?: unknown }, () => unknown][] = [
      [
        'pg/lib/utils not exported',
        pg,
        () => {
          throw new Error('ERR_PACKAGE_PATH_NOT_EXPORTED');
        },
      ],
      ['no prepareValue', pg, () => ({})],
      ['no Query', {}, utils],
      ['a Query without its steps', { Query: NoSteps }, utils],
      ['a Result without fields', { Query: NoResult }, utils],
    ];
    for (const [what, mod, load] of missing) assert.equal(describedOnceSupport(mod, load), undefined, what);
    // Without support, named statements are pg's own: right rows, a Describe with every execution.
    const plain = namedRunner(undefined);
    const describes = countDescribes(client);
    for (const n of [1, 2, 3]) {
      const res = await plain(query, { name: 'described_plain', text: 'select $1::int as n', values: [n] });
      assert.deepEqual(res.rows, [{ n }]);
    }
    assert.equal(describes.count, 3);
  });
});
