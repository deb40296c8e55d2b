import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { DIALECTS, suiteWithTenants, skipUnless } from './helpers.js';

/**
 * Bytes that are not UTF-8, and percent-escapes that do not decode, are refused where they are
 * parsed: a JSON body is malformed JSON (400, 1001, with the offset of the first bad byte); a
 * query string or an /oauth2 form is 400 (1009). Nothing is replaced by U+FFFD and stored.
 */
const json = (s: string) => Buffer.from(s, 'utf8');
const withBytes = (before: string, bytes: number[], after: string) =>
  Buffer.concat([json(before), Buffer.from(bytes), json(after)]);

for (const dialect of DIALECTS) {
  describe(`encodings at parse time (${dialect})`, { skip: skipUnless(dialect) }, () => {
    const { t, a } = suiteWithTenants(dialect);

    const send = (method: 'POST' | 'PATCH' | 'GET', url: string, payload?: Buffer, contentType = 'application/json') =>
      t.app.inject({
        method,
        url,
        payload,
        headers: {
          authorization: `Bearer ${a.token}`,
          'x-version': '1.0',
          ...(payload ? { 'content-type': contentType } : {}),
        },
      });

    it('malformed UTF-8 inside a JSON string is malformed JSON, 400 1001, naming the byte and its offset', async () => {
      const prefix = `{"users":[{"account":{"id":${a.accountId}},"firstName":"a`;
      const cases: [number[], string][] = [
        [[0xc3, 0x28], '0xC3'], // the reported one: a lead byte followed by a non-continuation
        [[0xff], '0xFF'],
        [[0xc0, 0xaf], '0xC0'], // overlong '/'
        [[0xed, 0xa0, 0x80], '0xED'], // an encoded surrogate (CESU-8)
        [[0x80], '0x80'], // a lone continuation byte
      ];
      for (const [bytes, named] of cases) {
        for (const method of ['POST', 'PATCH'] as const) {
          const res = await send(
            method,
            '/users',
            withBytes(prefix, bytes, '","lastName":"b","mobile":"+447700900001"}]}'),
          );
          assert.equal(res.statusCode, 400, `${bytes}: ${res.body}`);
          const body = JSON.parse(res.body);
          assert.equal(body.error.code, 1001);
          assert.match(
            body.error.message,
            new RegExp(
              `not valid UTF-8 \\(byte ${named} at byte offset ${Buffer.byteLength(prefix)}, line 1, column ${prefix.length + 1}\\)`,
            ),
          );
        }
      }
      // Truncated at the very end of the body.
      const res = await send('POST', '/users', withBytes('{"users":[{"firstName":"', [0xe2, 0x82], ''));
      assert.equal(res.statusCode, 400);
      assert.match(JSON.parse(res.body).error.message, /not valid UTF-8/);
      // Well-formed multi-byte text still goes through to validation.
      const ok = await send(
        'POST',
        '/users',
        json(
          `{"users":[{"account":{"id":${a.accountId}},"firstName":"Zoë 😀","lastName":"b","mobile":"+447700900001"}]}`,
        ),
      );
      assert.equal(ok.statusCode, 200, ok.body);
      assert.equal(JSON.parse(ok.body).users[0].firstName, 'Zoë 😀');
    });

    it('malformed JSON says where it stopped (line, column, offset) and what was expected', async () => {
      const cases: [string, RegExp][] = [
        [
          '{"users":[{"firstName":"a",}]}',
          /expected a property name in double quotes at line 1, column 28 \(offset 27\)/,
        ],
        ['{"users":[{"firstName" "a"}]}', /expected ':' after the property name at line 1, column 24/],
        ['{\n  "users": [\n    {"firstName": tru}\n  ]\n}', /at line 3, column 19/],
        ['{"users":[{"firstName":"a"}]', /expected ',' or '}' after a property value at line 1, column 29/],
        ['{"users":[]} x', /expected the end of the body .* at line 1, column 14/],
        ["{'users':[]}", /expected a property name in double quotes at line 1, column 2/],
        ['{"users":[{"n":01}]}', /at line 1, column 17/],
      ];
      for (const [text, re] of cases) {
        const res = await send('POST', '/users', json(text));
        assert.equal(res.statusCode, 400, text);
        const body = JSON.parse(res.body);
        assert.equal(body.error.code, 1001);
        assert.match(body.error.message, re, text);
        assert.ok(!body.error.message.includes('users'), 'the body is not echoed');
      }
    });

    it('a query string that is not percent-encoded UTF-8 is 400 1009 naming the parameter', async () => {
      for (const q of [
        'where=firstName%20~%20%22%C3%28%22',
        'fields=%FF',
        'sort=%E0%A4%A',
        'where=id%20=%201%',
        'fields=%zz',
      ]) {
        const res = await send('GET', `/users?${q}`);
        assert.equal(res.statusCode, 400, `${q}: ${res.body}`);
        const body = JSON.parse(res.body);
        assert.equal(body.error.code, 1009, q);
        assert.match(body.error.message, new RegExp(`in '${q.split('=')[0]}=`));
      }
      const ok = await send('GET', `/users?where=${encodeURIComponent('firstName ~ "Zoë"')}`);
      assert.equal(ok.statusCode, 200, ok.body);
    });

    it('an /oauth2 form body that is not UTF-8 or not percent-encoded is refused, never read as U+FFFD', async () => {
      const form = (payload: Buffer) =>
        t.app.inject({
          method: 'POST',
          url: '/oauth2/token',
          payload,
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
        });
      for (const payload of [
        withBytes('grant_type=authorization_code&code=', [0xc3, 0x28], ''),
        json('grant_type=authorization_code&code=%C3%28'),
        json('grant_type=%'),
      ]) {
        const res = await form(payload);
        assert.equal(res.statusCode, 400, res.body);
        const body = JSON.parse(res.body);
        assert.equal(body.error, 'invalid_request');
        assert.match(body.error_description, /UTF-8/);
      }
    });
  });
}
