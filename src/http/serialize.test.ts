import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { registry, ALL_PERMISSIONS } from '../collections/index.js';
import type { Caller, Collection, Row } from '../collections/machinery/collection.js';
import type { ScalarField } from '../collections/machinery/fields.js';
import { parseListQuery } from '../collections/machinery/modifiers.js';
import { present } from '../collections/machinery/present.js';
import { itemToRow } from '../collections/machinery/validate.js';
import { createAccount } from '../accounts/service.js';
import { ApiError, validationError } from '../errors.js';
import { compiledCount, errorAnswer, fallbacks, listAnswer } from './serialize.js';
import { DIALECTS, createTestDb, skipUnless, type TestDb } from '../../test/helpers.js';

/**
 * The compiled serializers write what JSON.stringify writes, byte for byte: for every collection's
 * `example` item, presented as the API presents it (fields by default, `*`, `*,[*]`), and for edge
 * values in every column (control characters, quotes, lone surrogates, U+2028, long strings, -0,
 * integers past 2^53, exponents, nulls, empty objects), on each database's own row values.
 */
const EDGE_STRINGS = [
  '',
  '\u0000\u0007\b\t\n\f\r\u001f"\\/',
  'lone \ud800 and \udc00 surrogates',
  '\u2028\u2029 é 😀 \u007f',
  `${'x'.repeat(5000)}"`,
  'y'.repeat(45),
];
const EDGE_NUMBERS = [-0, 2 ** 53 + 2, 1e21, 0.1 + 0.2, -1.5e-7, 2147483647];

/** Rows of a collection: its example as stored, then that row with each column set to edge values. */
function rowsOf(c: Collection, example: Row): Row[] {
  const rows = [example];
  const scalars: ScalarField[] = [];
  for (const f of Object.values(c.fields)) {
    if (f.kind === 'scalar') scalars.push(f);
    if (f.kind === 'object') scalars.push(...Object.values(f.members));
  }
  for (let i = 0; i < Math.max(EDGE_STRINGS.length, EDGE_NUMBERS.length); i++) {
    const row: Row = { ...example };
    for (const s of scalars) {
      if (s.type === 'string' || s.type === 'datetime') row[s.column] = EDGE_STRINGS[i % EDGE_STRINGS.length];
      else if (s.type === 'integer' || s.type === 'number' || s.type === 'decimal')
        row[s.column] = EDGE_NUMBERS[i % EDGE_NUMBERS.length];
      else if (s.type === 'json')
        row[s.column] = JSON.stringify([EDGE_STRINGS[i % EDGE_STRINGS.length], -0, { a: null }]);
      else if (s.type === 'boolean' || s.type === 'flag') row[s.column] = i % 2;
      // Every other row has its nullable values null (object members are then left out).
      if (s.nullable && i % 2 === 1) row[s.column] = null;
    }
    rows.push(row);
  }
  return rows;
}

for (const dialect of DIALECTS) {
  describe(`compiled answers (${dialect})`, { skip: skipUnless(dialect) }, () => {
    let t: TestDb;
    let caller: Caller;
    let roleId: number;
    before(async () => {
      t = await createTestDb(dialect);
      const { account, user } = await createAccount(t.services.writer, {
        companyName: 'Ünïcode "Co"',
        firstName: 'Ada',
        lastName: 'Admin',
        mobile: '+441234567890',
        login: 'ser-admin',
        password: 'correct horse battery',
      });
      roleId = (
        await t.database.db
          .selectFrom('roles')
          .select('id')
          .where('account_id', '=', account.id)
          .executeTakeFirstOrThrow()
      ).id;
      caller = {
        accountId: account.id,
        userId: user.id,
        role: 'administrator',
        permissions: new Set(ALL_PERMISSIONS),
        clientId: 'test',
        now: Date.now(),
        publicUrl: t.config.publicUrl,
      };
    });
    after(() => t.close());

    test('every collection: the compiled list answer is JSON.stringify of the presented items', async () => {
      for (const c of registry.list) {
        // References point at rows that exist (the account, its role, its administrator) so `[*]` expands them.
        const item = c.example((target) => ({
          id: target === 'accounts' ? caller.accountId : target === 'roles' ? roleId : caller.userId,
        }));
        const stored: Row = {
          ...itemToRow(c, item, 'create', caller.now),
          id: 7,
          account_id: caller.accountId,
          created: caller.now,
          modified: caller.now,
          version: 3,
        };
        for (const fields of [undefined, '*', '*,[*]']) {
          const q = parseListQuery(c, fields ? { fields } : {});
          const items = await present(t.database.db, c, caller, q.projection, rowsOf(c, stored));
          const body = {
            result: 'success' as const,
            [c.name]: items,
            metadata: { page: 1, pagesCount: 1, recordsPerPage: 50, recordsCount: items.length },
          };
          const before = fallbacks.count;
          // The first answer of a projection is JSON.stringify's; the second compiles it.
          for (let i = 0; i < 2; i++)
            assert.equal(listAnswer(c, q.projection.fields, body), JSON.stringify(body), `${c.name} fields=${fields}`);
          assert.equal(compiledCount(c, q.projection.fields), 1, `${c.name} fields=${fields} compiled`);
          // The compiled code wrote it: no value made it fall back to JSON.stringify.
          assert.equal(fallbacks.count, before, `${c.name} fields=${fields} fell back`);
        }
      }
    });
  });
}

test('a value of another type than declared falls back to JSON.stringify, with the same bytes', () => {
  const users = registry.get('users')!;
  const body = {
    result: 'success' as const,
    users: [{ id: 1, firstName: 5, hourlyRate: '12.50', status: { message: 'x' } }],
    metadata: { page: 1, pagesCount: 1, recordsPerPage: 50, recordsCount: 1 },
  };
  const before = fallbacks.count;
  for (let i = 0; i < 2; i++)
    assert.equal(listAnswer(users, ['firstName', 'hourlyRate', 'status'], body), JSON.stringify(body));
  assert.equal(compiledCount(users, ['firstName', 'hourlyRate', 'status']), 1);
  assert.equal(fallbacks.count, before + 1);
});

test('projections compile on their second answer, at most 50 per collection; the rest are JSON.stringify', () => {
  const jobs = registry.get('jobs')!;
  const names = Object.keys(jobs.fields).filter((n) => jobs.fields[n].kind !== 'writeOnly');
  const body = {
    result: 'success' as const,
    jobs: [{ id: 1, title: 'x' }],
    metadata: { page: 1, pagesCount: 1, recordsPerPage: 50, recordsCount: 1 },
  };
  const once = ['title', 'reference'];
  assert.equal(listAnswer(jobs, once, body), JSON.stringify(body));
  assert.equal(compiledCount(jobs, once), 0);
  // 60 projections (pairs of fields), each answered twice.
  const projections = names.flatMap((a, i) => names.slice(i + 1).map((b) => [a, b])).slice(0, 60);
  assert.equal(new Set(projections.map((p) => p.join())).size, projections.length);
  for (const p of projections) {
    const answer = { ...body, jobs: [{ id: 1, ...Object.fromEntries(p.map((n) => [n, null])) }] };
    for (let i = 0; i < 2; i++) assert.equal(listAnswer(jobs, p, answer), JSON.stringify(answer));
  }
  assert.equal(compiledCount(jobs), 50);
});

test('error answers are JSON.stringify of the error envelope', () => {
  const before = fallbacks.count;
  for (const body of [
    new ApiError('itemNotFound').body,
    new ApiError('badModifier', 'bad \u0000 "x" \ud800').body,
    validationError('invalid', 'na\u2028me', 'why'),
  ]) {
    assert.equal(errorAnswer(body), JSON.stringify({ result: 'error', error: body }));
  }
  assert.equal(fallbacks.count, before);
});
