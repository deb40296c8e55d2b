import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { ApiError } from '../../errors.js';
import { hasLoneSurrogate, lowerText } from '../../db/text.js';
import { parseWhere } from './where.js';
import { suiteWithTenants, call, DIALECTS, newUser, skipUnless } from '../../../test/helpers.js';

/**
 * Text behaves the same on both databases: `~` is case-insensitive over all of Unicode (SQLite's
 * lower() knows only ASCII, so the server gives it fsm_lower), and half of a surrogate pair, which
 * each database would store differently, is refused like U+0000.
 */
const NAMES = ['ÜBERGRÖSSE', 'ΟΔΟΣ', 'İSTANBUL', 'STRAẞE', 'Ǆemal', 'plain ascii'];

for (const dialect of DIALECTS) {
  describe(`text on ${dialect}`, { skip: skipUnless(dialect) }, () => {
    const { t, a } = suiteWithTenants(dialect);
    const tag = `tx${Date.now().toString(36)}`;
    before(async () => {
      const res = await call(t.app, a.token, 'POST', '/users', {
        users: NAMES.map((lastName) => newUser(a.accountId, { lastName, firstName: tag })),
      });
      assert.equal(res.status, 200, res.raw);
    });

    const found = async (term: string) => {
      const where = `firstName = "${tag}" and ${term}`;
      const res = await call(t.app, a.token, 'GET', `/users?fields=lastName&where=${encodeURIComponent(where)}`);
      assert.equal(res.status, 200, res.raw);
      return (res.body.users as { lastName: string }[]).map((u) => u.lastName).sort();
    };

    test('~ and !~ ignore case beyond ASCII: "über" finds ÜBERGRÖSSE', async () => {
      assert.deepEqual(await found('lastName ~ "über"'), ['ÜBERGRÖSSE']);
      assert.deepEqual(await found('lastName ~ "ÜBER"'), ['ÜBERGRÖSSE']);
      assert.deepEqual(await found('lastName ~ "grösse"'), ['ÜBERGRÖSSE']);
      assert.deepEqual(await found('lastName !~ "über"'), NAMES.filter((n) => n !== 'ÜBERGRÖSSE').sort());
    });

    test('the cases where a naive lowering would differ answer alike on both databases', async () => {
      // A capital sigma lowers to σ wherever it stands (JavaScript alone would make the last one ς).
      assert.deepEqual(await found('lastName ~ "οδοσ"'), ['ΟΔΟΣ']);
      assert.deepEqual(await found('lastName ~ "ΟΔΟΣ"'), ['ΟΔΟΣ']);
      // İ lowers to i (JavaScript alone: i + combining dot).
      assert.deepEqual(await found('lastName ~ "istanbul"'), ['İSTANBUL']);
      // ẞ lowers to ß; no full case folding: "ss" is not ß.
      assert.deepEqual(await found('lastName ~ "straße"'), ['STRAẞE']);
      assert.deepEqual(await found('lastName ~ "strasse"'), []);
      // A title-case digraph lowers like any letter.
      assert.deepEqual(await found('lastName ~ "ǆ"'), ['Ǆemal']);
      // % and _ stay literal.
      assert.deepEqual(await found('lastName ~ "pl_in"'), []);
    });

    test('a lone surrogate in a JSON body: 400 (1001) saying so, nothing stored', async () => {
      const count = async () =>
        (await call(t.app, a.token, 'GET', `/users?where=${encodeURIComponent(`firstName = "${tag}"`)}`)).body.metadata
          .recordsCount as number;
      const before = await count();
      const item = (lastName: string) =>
        `{"users":[{"account":{"id":${a.accountId}},"firstName":"${tag}","lastName":"${lastName}","mobile":"+447700900123"}]}`;
      for (const body of [
        item('a\\ud800b'),
        item('a\\uDC00'),
        item('\\udbff'),
        item('pair reversed \\udc00\\ud800'),
        `{"users":[{"\\ud800":1}]}`,
      ]) {
        const res = await call(t.app, a.token, 'POST', '/users', body);
        assert.equal(res.status, 400, `${body}: ${res.raw}`);
        assert.equal(res.body.error.code, 1001);
        assert.match(res.body.error.message, /lone surrogate/);
      }
      assert.equal(await count(), before);
      // A proper pair (an emoji) is a character like any other, stored and read back the same.
      const ok = await call(t.app, a.token, 'POST', '/users', item('Smile \\ud83d\\ude00'));
      assert.equal(ok.status, 200, ok.raw);
      assert.equal(ok.body.users[0].lastName, 'Smile 😀');
      assert.deepEqual(await found('lastName ~ "😀"'), ['Smile 😀']);
    });

    test('a lone surrogate in a where string: 400, never a query', async () => {
      // Over HTTP it can only arrive as escapes that are not UTF-8: refused as such.
      const res = await call(t.app, a.token, 'GET', '/users?where=lastName~"%ED%A0%80"');
      assert.equal(res.status, 400, res.raw);
      // Anywhere else a where string comes from, the parser refuses it (1002).
      assert.throws(
        () => parseWhere('lastName ~ "a\ud800b"'),
        (e: unknown) => e instanceof ApiError && e.body.code === 1002 && /lone surrogate/.test(e.body.message),
      );
      assert.doesNotThrow(() => parseWhere('lastName ~ "a\ud83d\ude00b"'));
    });
  });
}

test('lowerText is lower() per code point; hasLoneSurrogate finds unpaired halves only', () => {
  assert.equal(lowerText('ΟΔΟΣ İ ẞ ÜBER'), 'οδοσ i ß über');
  assert.equal(lowerText('ὈΔΥΣΣΕΎΣ'), 'ὀδυσσεύσ');
  assert.equal(lowerText('already lower'), 'already lower');
  assert.ok(hasLoneSurrogate('a\ud800'));
  assert.ok(hasLoneSurrogate('\udc00b'));
  assert.ok(!hasLoneSurrogate('\ud83d\ude00'));
  assert.ok(!hasLoneSurrogate('plain'));
});
