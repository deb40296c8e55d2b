import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { sql } from 'kysely';
import { ALL_PERMISSIONS } from '../../collections/index.js';
import { issueToken } from '../../auth/tokens.js';
import {
  DIALECTS,
  addUser,
  suiteWithTenants,
  call,
  createClient,
  skipUnless,
  type Tenant,
} from '../../../test/helpers.js';
import { purgeInBackground } from './purge.js';
import { LEASE_MS, RETENTION_MS, claim, keep, keepOnce, purgeExpired } from './repository.js';
import { withTransaction } from '../../db/tx.js';

const key = () => `k-${crypto.randomBytes(8).toString('hex')}`;
const job = (title: string) => ({ jobs: [{ title }] });

for (const dialect of DIALECTS) {
  describe(`Idempotency-Key (${dialect})`, { skip: skipUnless(dialect) }, () => {
    const { t, a, b } = suiteWithTenants(dialect);

    const post = (token: string, k: string | undefined, body: unknown, url = '/jobs', method = 'POST') =>
      call(t.app, token, method, url, body, k === undefined ? {} : { 'idempotency-key': k });
    /** Jobs of the tenant with this title, read from the database. */
    const jobsTitled = async (tenant: Tenant, title: string) =>
      (
        await t.database.db
          .selectFrom('jobs')
          .select('id')
          .where('account_id', '=', tenant.accountId)
          .where('title', '=', title)
          .execute()
      ).length;
    const keptRows = async (k: string) =>
      await t.database.db.selectFrom('idempotency_keys').selectAll().where('key', '=', k).execute();

    test('a repeat gets the first answer again, byte for byte, with Idempotency-Replayed: true; the job is created once', async () => {
      const k = key();
      const first = await post(a.token, k, job('once'));
      assert.equal(first.status, 200);
      assert.equal(first.headers['idempotency-replayed'], undefined);
      const again = await post(a.token, k, job('once'));
      assert.equal(again.status, 200);
      assert.equal(again.headers['idempotency-replayed'], 'true');
      assert.equal(again.raw, first.raw);
      assert.match(String(again.headers['content-type']), /^application\/json/);
      assert.equal(await jobsTitled(a, 'once'), 1);
      // The same body re-serialised differently (whitespace) is the same request.
      const spaced = await call(t.app, a.token, 'POST', '/jobs', JSON.stringify(job('once'), null, 2), {
        'idempotency-key': k,
        'content-type': 'application/json',
      });
      assert.equal(spaced.headers['idempotency-replayed'], 'true');
      assert.equal(await jobsTitled(a, 'once'), 1);
    });

    test('PATCH and DELETE are replayed too (a repeated DELETE is not a 422 for a missing item)', async () => {
      const id = (await post(a.token, undefined, job('to patch'))).body.jobs[0].id as number;
      const kp = key();
      const patched = await post(a.token, kp, { jobs: [{ title: 'patched' }] }, `/jobs/${id}`, 'PATCH');
      assert.equal(patched.status, 200);
      await post(a.token, undefined, { jobs: [{ title: 'changed by someone else' }] }, `/jobs/${id}`, 'PATCH');
      const patchedAgain = await post(a.token, kp, { jobs: [{ title: 'patched' }] }, `/jobs/${id}`, 'PATCH');
      assert.equal(patchedAgain.headers['idempotency-replayed'], 'true');
      assert.equal(patchedAgain.raw, patched.raw);
      assert.equal((await call(t.app, a.token, 'GET', `/jobs/${id}`)).body.jobs[0].title, 'changed by someone else');
      const kd = key();
      const deleted = await post(a.token, kd, undefined, `/jobs/${id}`, 'DELETE');
      assert.equal(deleted.status, 200);
      const deletedAgain = await post(a.token, kd, undefined, `/jobs/${id}`, 'DELETE');
      assert.equal(deletedAgain.status, 200);
      assert.equal(deletedAgain.headers['idempotency-replayed'], 'true');
      assert.equal(deletedAgain.raw, deleted.raw);
    });

    test('the key must be 1–255 printable ASCII characters, bare or quoted; anything else is 400 (1006)', async () => {
      for (const bad of ['', 'x'.repeat(256), 'caf\u00e9', 'tab\there', '"unterminated', '"a"b"']) {
        const res = await post(a.token, bad, job('bad key'));
        assert.equal(res.status, 400, JSON.stringify(bad));
        assert.equal(res.body.error.code, 1006);
      }
      assert.equal(await jobsTitled(a, 'bad key'), 0);
      const long = `L${key()}`.padEnd(255, 'x');
      assert.equal((await post(a.token, long, job('long key'))).status, 200);
      assert.equal((await post(a.token, long, job('long key'))).headers['idempotency-replayed'], 'true');
      // The quoted form names the same key as the bare one.
      const k = key();
      assert.equal((await post(a.token, `"${k}"`, job('quoted'))).status, 200);
      assert.equal((await post(a.token, k, job('quoted'))).headers['idempotency-replayed'], 'true');
      assert.equal(await jobsTitled(a, 'quoted'), 1);
    });

    test('GET ignores the header, even a malformed one', async () => {
      const res = await call(t.app, a.token, 'GET', '/jobs', undefined, { 'idempotency-key': '' });
      assert.equal(res.status, 200);
      assert.equal(res.headers['idempotency-replayed'], undefined);
    });

    test('the same key with another method, path or body is 422 (1249), and nothing is done', async () => {
      const k = key();
      assert.equal((await post(a.token, k, job('first body'))).status, 200);
      const otherBody = await post(a.token, k, job('second body'));
      assert.equal(otherBody.status, 422);
      assert.equal(otherBody.body.error.code, 1249);
      assert.equal(otherBody.headers['idempotency-replayed'], undefined);
      assert.equal(await jobsTitled(a, 'second body'), 0);
      const otherPath = await post(a.token, k, { clients: [{ name: 'first body' }] }, '/clients');
      assert.equal(otherPath.body.error.code, 1249);
      const otherMethod = await post(a.token, k, job('first body'), '/jobs', 'PATCH');
      assert.equal(otherMethod.body.error.code, 1249);
      assert.equal(await jobsTitled(a, 'first body'), 1);
    });

    test('keys are scoped to the account, the user and the client of the token', async () => {
      const k = key();
      assert.equal((await post(a.token, k, job('scoped'))).status, 200);
      // Another account, another user of the same account, another client of the same user.
      assert.equal((await post(b.token, k, job('scoped'))).headers['idempotency-replayed'], undefined);
      const other = await addUser(t, a, 'administrator');
      const byOtherUser = await post(other.token, k, job('scoped'));
      assert.equal(byOtherUser.status, 200);
      assert.equal(byOtherUser.headers['idempotency-replayed'], undefined);
      const { clientId } = await createClient(t.database);
      const { token } = await issueToken(
        t.database.db,
        'access',
        { clientId, userId: a.adminId, accountId: a.accountId, permissions: [...ALL_PERMISSIONS] },
        t.clock.now,
      );
      const byOtherClient = await post(token, k, job('scoped'));
      assert.equal(byOtherClient.status, 200);
      assert.equal(byOtherClient.headers['idempotency-replayed'], undefined);
      assert.equal(await jobsTitled(a, 'scoped'), 3);
      assert.equal(await jobsTitled(b, 'scoped'), 1);
    });

    test('while the first request runs: 409 (1090); once its lease has run out, a repeat runs', async () => {
      const k = key();
      const body = job('in flight');
      // The first request has claimed the key and not answered yet (or died doing so).
      const scope = { accountId: a.accountId, clientId: a.clientId, userId: a.adminId, key: k };
      const fingerprint = crypto
        .createHash('sha256')
        .update(`POST /jobs\n${crypto.createHash('sha256').update(JSON.stringify(body)).digest('hex')}`)
        .digest('hex');
      assert.equal((await claim(t.database.db, scope, fingerprint, t.clock.now)).kind, 'claimed');
      const busy = await post(a.token, k, body);
      assert.equal(busy.status, 409);
      assert.equal(busy.body.error.code, 1090);
      // Another body with the key is still a misuse of the key.
      assert.equal((await post(a.token, k, job('something else'))).status, 422);
      assert.equal(await jobsTitled(a, 'in flight'), 0);
      t.clock.now += LEASE_MS + 1;
      const taken = await post(a.token, k, body);
      assert.equal(taken.status, 200);
      assert.equal(taken.headers['idempotency-replayed'], undefined);
      assert.equal((await post(a.token, k, body)).headers['idempotency-replayed'], 'true');
      assert.equal(await jobsTitled(a, 'in flight'), 1);
    });

    test('a request that outlived its lease cannot keep its answer once a repeat took the key over', async () => {
      const scope = { accountId: a.accountId, clientId: a.clientId, userId: a.adminId, key: key() };
      const now = t.clock.now;
      const slow = await claim(t.database.db, scope, 'fp', now);
      assert.equal(slow.kind, 'claimed');
      assert.equal((await claim(t.database.db, scope, 'fp', now + 1)).kind, 'inFlight');
      const taker = await claim(t.database.db, scope, 'fp', now + LEASE_MS + 1);
      assert.equal(taker.kind, 'claimed');
      const answer = { status: 200, headers: {}, body: '{}' };
      // The slow one's keep (in its write's transaction) matches nothing: that write rolls back.
      assert.equal(
        await keep(
          t.database.db,
          { accountId: scope.accountId, id: (slow as { id: number }).id },
          (slow as { lease: string }).lease,
          answer,
        ),
        false,
      );
      assert.equal(
        await keep(
          t.database.db,
          { accountId: scope.accountId, id: (taker as { id: number }).id },
          (taker as { lease: string }).lease,
          answer,
        ),
        true,
      );
      assert.equal((await claim(t.database.db, scope, 'fp', now + LEASE_MS + 2)).kind, 'done');
    });

    test('a validation failure (422) is kept and replayed; so is another 4xx', async () => {
      const k = key();
      const first = await post(a.token, k, { jobs: [{ title: '' }] });
      assert.equal(first.status, 422);
      const again = await post(a.token, k, { jobs: [{ title: '' }] });
      assert.equal(again.status, 422);
      assert.equal(again.headers['idempotency-replayed'], 'true');
      assert.equal(again.raw, first.raw);
      const k2 = key();
      const tooMany = { jobs: Array.from({ length: 101 }, () => ({ title: 'many' })) };
      assert.equal((await post(a.token, k2, tooMany)).status, 413);
      const tooManyAgain = await post(a.token, k2, tooMany);
      assert.equal(tooManyAgain.status, 413);
      assert.equal(tooManyAgain.headers['idempotency-replayed'], 'true');
    });

    test('a 5xx is not kept: nothing was committed, so a retry runs again', async () => {
      const fail =
        dialect === 'postgres'
          ? [
              sql`create function fsm_test_fail() returns trigger language plpgsql as $$ begin raise exception 'boom'; end $$`,
              sql`create trigger fsm_test_fail before insert on jobs for each row execute function fsm_test_fail()`,
            ]
          : [sql`create trigger fsm_test_fail before insert on jobs begin select raise(abort, 'boom'); end`];
      for (const s of fail) await s.execute(t.database.db);
      const k = key();
      try {
        const res = await post(a.token, k, job('after a 500'));
        assert.equal(res.status, 500);
        assert.deepEqual(await keptRows(k), []);
      } finally {
        await sql
          .raw(
            dialect === 'postgres'
              ? 'drop trigger fsm_test_fail on jobs; drop function fsm_test_fail()'
              : 'drop trigger fsm_test_fail',
          )
          .execute(t.database.db);
      }
      const retry = await post(a.token, k, job('after a 500'));
      assert.equal(retry.status, 200);
      assert.equal(retry.headers['idempotency-replayed'], undefined);
      assert.equal(await jobsTitled(a, 'after a 500'), 1);
    });

    test("uploads: the same bytes replay, other bytes with the key are 422; the fingerprint is the bytes' SHA-256", async () => {
      const upload = (k: string, bytes: Buffer, name = 'photo.jpg') =>
        t.app.inject({
          method: 'POST',
          url: `/files/upload?name=${name}`,
          payload: bytes,
          headers: {
            authorization: `Bearer ${a.token}`,
            'x-version': '1.0',
            'content-type': 'image/jpeg',
            'idempotency-key': k,
          },
        });
      const bytes = crypto.randomBytes(50_000);
      const k = key();
      const first = await upload(k, bytes);
      assert.equal(first.statusCode, 200);
      const again = await upload(k, bytes);
      assert.equal(again.statusCode, 200);
      assert.equal(again.headers['idempotency-replayed'], 'true');
      assert.equal(again.body, first.body);
      const sha256 = crypto.createHash('sha256').update(bytes).digest('hex');
      assert.equal(
        (
          await t.database.db
            .selectFrom('files')
            .select('id')
            .where('account_id', '=', a.accountId)
            .where('sha256', '=', sha256)
            .execute()
        ).length,
        1,
      );
      const otherBytes = await upload(k, crypto.randomBytes(50_000));
      assert.equal(otherBytes.statusCode, 422);
      assert.equal(JSON.parse(otherBytes.body).error.code, 1249);
      assert.equal((await upload(k, bytes, 'renamed.jpg')).statusCode, 422);
    });

    test('multipart uploads: a retry with a new boundary is the same request; another name field is not', async () => {
      const form = (k: string, bytes: Buffer, name: string) => {
        const boundary = `----fsm${crypto.randomBytes(8).toString('hex')}`;
        const part = (head: string, value: Buffer | string) => [
          Buffer.from(`--${boundary}\r\n${head}\r\n\r\n`),
          Buffer.from(value),
          Buffer.from('\r\n'),
        ];
        const payload = Buffer.concat([
          ...part('Content-Disposition: form-data; name="name"', name),
          ...part(
            'Content-Disposition: form-data; name="file"; filename="x.bin"\r\nContent-Type: application/pdf',
            bytes,
          ),
          Buffer.from(`--${boundary}--\r\n`),
        ]);
        return t.app.inject({
          method: 'POST',
          url: '/files/upload',
          payload,
          headers: {
            authorization: `Bearer ${a.token}`,
            'x-version': '1.0',
            'content-type': `multipart/form-data; boundary=${boundary}`,
            'idempotency-key': k,
          },
        });
      };
      const bytes = crypto.randomBytes(20_000);
      const k = key();
      const first = await form(k, bytes, 'report.pdf');
      assert.equal(first.statusCode, 200, first.body);
      const again = await form(k, bytes, 'report.pdf');
      assert.equal(again.statusCode, 200);
      assert.equal(again.headers['idempotency-replayed'], 'true');
      assert.equal(again.body, first.body);
      const renamed = await form(k, bytes, 'other.pdf');
      assert.equal(renamed.statusCode, 422);
      assert.equal(JSON.parse(renamed.body).error.code, 1249);
      const sha256 = crypto.createHash('sha256').update(bytes).digest('hex');
      assert.equal(
        (await t.database.db.selectFrom('files').select('id').where('sha256', '=', sha256).execute()).length,
        1,
      );
    });

    test('answers are kept 24 h, then purged in small batches; an expired key runs again', async () => {
      // Access tokens live an hour: a new one (same client and user) after each move of the clock.
      const later = async (ms: number) => {
        t.clock.now += ms;
        return a.tokenFor(a.adminId);
      };
      const k = key();
      assert.equal((await post(a.token, k, job('kept a day'))).status, 200);
      let token = await later(RETENTION_MS - 1000);
      assert.equal((await post(token, k, job('kept a day'))).headers['idempotency-replayed'], 'true');
      token = await later(2000);
      const expired = await post(token, k, job('kept a day'));
      assert.equal(expired.status, 200);
      assert.equal(expired.headers['idempotency-replayed'], undefined);
      assert.equal(await jobsTitled(a, 'kept a day'), 2);
      // Purge: every row past its time goes, a batch at a time; the fresh one stays.
      const old = key();
      await post(token, old, job('purged'));
      token = await later(RETENTION_MS + 1);
      const fresh = key();
      assert.equal((await post(token, fresh, job('fresh'))).status, 200);
      let total = 0;
      for (let n = -1; n !== 0; total += n) n = await purgeExpired(t.database.db, t.clock.now, 2);
      assert.ok(total >= 2);
      assert.deepEqual(await keptRows(old), []);
      assert.equal((await keptRows(fresh)).length, 1);
    });

    test('the purge runs in the background once the app is ready, and stops when it closes', async () => {
      const token = await a.tokenFor(a.adminId);
      const k = key();
      assert.equal((await post(token, k, job('purged in the background'))).status, 200);
      const hooks = new Map<string, () => Promise<void>>();
      const clock = () => t.clock.now + RETENTION_MS + 1;
      purgeInBackground(
        {
          database: t.database,
          clock,
          addHook: ((name: string, fn: () => Promise<void>) => hooks.set(name, fn)) as never,
        },
        20,
      );
      await hooks.get('onReady')!();
      try {
        for (let i = 0; i < 100 && (await keptRows(k)).length; i++) await new Promise((r) => setTimeout(r, 20));
        assert.deepEqual(await keptRows(k), []);
      } finally {
        await hooks.get('onClose')!();
      }
    });

    test('two processes keep one key in concurrent transactions: one keeps it, the other finds the answer (and must roll back)', async () => {
      // What a write in another process meets: its transaction inserts the kept answer with the key,
      // after the first one did and before that committed.
      const scope = { accountId: a.accountId, clientId: a.clientId, userId: a.adminId, key: key() };
      const answer = { status: 200, headers: {}, body: '{"first":true}' };
      let release!: () => void;
      const held = new Promise<void>((r) => (release = r));
      let inserted!: () => void;
      const first = withTransaction(t.database, async (tx) => {
        const r = await keepOnce(tx, scope, 'fp', t.clock.now, answer);
        inserted();
        await held;
        return r;
      });
      await new Promise<void>((r) => (inserted = r));
      const second = withTransaction(t.database, (tx) =>
        keepOnce(tx, scope, 'fp', t.clock.now, { ...answer, body: '{"second":true}' }),
      );
      const other = withTransaction(t.database, (tx) =>
        keepOnce(tx, scope, 'another fingerprint', t.clock.now, answer),
      );
      await new Promise((r) => setTimeout(r, 100));
      release();
      assert.deepEqual(await first, { kind: 'kept' });
      assert.deepEqual(await second, { kind: 'done', answer });
      assert.deepEqual(await other, { kind: 'mismatch' });
      assert.equal((await keptRows(scope.key)).length, 1);
    });

    test('concurrent identical requests: exactly one does the work, the others get 409 or the replay', async () => {
      const token = await a.tokenFor(a.adminId);
      for (let round = 0; round < 3; round++) {
        const k = key();
        const title = `race ${round} ${k}`;
        const answers = await Promise.all(Array.from({ length: 6 }, () => post(token, k, job(title))));
        const fresh = answers.filter((r) => r.status === 200 && r.headers['idempotency-replayed'] === undefined);
        assert.equal(
          fresh.length,
          1,
          answers.map((r) => `${r.status} ${r.headers['idempotency-replayed']}`).join(', '),
        );
        for (const r of answers)
          assert.ok(r.status === 200 || (r.status === 409 && r.body.error.code === 1090), `${r.status} ${r.raw}`);
        for (const r of answers.filter((x) => x.status === 200)) assert.equal(r.raw, fresh[0].raw);
        assert.equal(await jobsTitled(a, title), 1);
      }
    });
  });
}
