import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { DIALECTS, suiteWithTenants, call, errorsOf, skipUnless } from './helpers.js';

/**
 * Error messages a new user meets first say what to do: the codes stay, the words improve.
 * (Malformed JSON and its position: test/encoding.test.ts.)
 */
for (const dialect of DIALECTS) {
  describe(`error messages that say what to do (${dialect})`, { skip: skipUnless(dialect) }, () => {
    const { t, a } = suiteWithTenants(dialect);

    const where = async (expr: string) => {
      const res = await call(t.app, a.token, 'GET', `/users?where=${encodeURIComponent(expr)}`);
      assert.equal(res.status, 400, `${expr}: ${res.raw}`);
      assert.equal(res.body.error.code, 1002);
      return res.body.error.message as string;
    };

    it('where: a missing or unquoted value names the value forms and where parsing stopped', async () => {
      const values = /values are quoted strings \("…" or '…'\), numbers, true, false or null/;
      const eqeq = await where('firstName == "bob"');
      assert.match(eqeq, values);
      assert.match(eqeq, /at position 12: '= "bob"'/);
      assert.match(eqeq, /there is no '=='/);
      const bare = await where('firstName = bob');
      assert.match(bare, values);
      assert.match(bare, /at position 13: 'bob'/);
      assert.match(bare, /text must be quoted: "bob"/);
      assert.match(await where('firstName ='), /at the end/);
      assert.match(await where('firstName ~ "bob'), /unterminated string starting at position 13; close it with "/);
      assert.match(
        await where('firstName ~ "a" lastName ~ "b"'),
        /after a complete expression at position 17: 'lastName ~ "b"'; join terms with and \/ or/,
      );
      assert.match(await where('firstName # "a"'), /unexpected character at position 11: '# "a"'/);
      assert.match(
        await where('firstName "a"'),
        /expected an operator after 'firstName' \(~ !~ = != < <= > >=\) at position 11/,
      );
    });

    it('an unknown query parameter names the ones a list takes', async () => {
      const res = await call(t.app, a.token, 'GET', '/users?limit=5');
      assert.equal(res.status, 400);
      assert.equal(res.body.error.code, 1002);
      assert.match(
        res.body.error.message,
        /unknown query parameter 'limit' \(lists take fields, where, sort, q, near, page and recordsPerPage\)/,
      );
    });

    it('a bad enum value lists the allowed values', async () => {
      const res = await call(t.app, a.token, 'POST', '/jobs', { jobs: [{ title: 'x', priority: 'asap' }] });
      assert.equal(res.status, 422);
      assert.deepEqual(errorsOf(res), ['1041:priority']);
      assert.match(res.body.failures[0].errors[0].message, /must be one of "low", "normal", "high", "urgent"/);
      assert.doesNotMatch(res.body.failures[0].errors[0].message, /union/);
      const group = await call(t.app, a.token, 'POST', '/statuses', { statuses: [{ label: 'Odd', group: 'done' }] });
      assert.match(
        group.body.failures[0].errors[0].message,
        /must be one of "new", "inProgress", "onHold", "completed"/,
      );
    });

    it('a body not wrapped in its collection shows the expected shape', async () => {
      const bare = await call(t.app, a.token, 'POST', '/jobs', { title: 'Boiler' });
      assert.equal(bare.status, 422);
      assert.equal(bare.body.error.code, 1247);
      assert.match(
        bare.body.error.message,
        /'title' is a field of jobs: items go inside the collection, as \{"jobs":\[\{"title":...\}\]\}/,
      );
      const other = await call(t.app, a.token, 'POST', '/jobs', { users: [] });
      assert.equal(other.body.error.code, 1247);
      assert.match(other.body.error.message, /'users' sent to \/jobs; expected \{"jobs":\[\{\.\.\.\}, \.\.\.\]\}/);
      const notArray = await call(t.app, a.token, 'POST', '/jobs', { jobs: { title: 'x' } });
      assert.equal(notArray.body.error.code, 1248);
      assert.match(notArray.body.error.message, /'jobs' is not an array; expected \{"jobs":\[\{\.\.\.\}, \.\.\.\]\}/);
      const array = await call(t.app, a.token, 'POST', '/jobs', [{ title: 'x' }]);
      assert.equal(array.body.error.code, 1248);
      assert.match(array.body.error.message, /expected \{"jobs":/);
    });

    it('an Authorization header without the Bearer scheme says so; the scheme is case-insensitive', async () => {
      const send = (authorization: string) =>
        t.app.inject({ method: 'GET', url: '/users', headers: { authorization, 'x-version': '1.0' } });
      const bare = await send(a.token);
      assert.equal(bare.statusCode, 401);
      assert.equal(bare.json().error.code, 1011);
      assert.match(
        bare.json().error.message,
        /the Bearer scheme is missing; send 'Authorization: Bearer <access token>'/,
      );
      assert.match(
        (await send(`Basic ${Buffer.from('a:b').toString('base64')}`)).json().error.message,
        /the Basic scheme is not accepted/,
      );
      assert.match((await send('Bearer ')).json().error.message, /after "Bearer " is empty/);
      assert.match((await send('Bearer not valid!')).json().error.message, /characters an access token never has/);
      // A well-formed but unknown token keeps the plain message.
      assert.equal((await send('Bearer abc')).json().error.message, 'The access token is invalid, expired or revoked');
      for (const scheme of ['bearer', 'BEARER', 'Bearer  ']) {
        const ok = await send(`${scheme} ${a.token}`);
        assert.equal(ok.statusCode, 200, `${scheme}: ${ok.body}`);
      }
    });
  });
}
