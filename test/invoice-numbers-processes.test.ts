import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { ERRORS } from '../src/errors.js';
import { DIALECTS, skipUnless } from './helpers.js';
import { until } from './receiver.js';
import { createSite, request, siteAccount, startServer } from './reliability/process.js';

/**
 * Gapless invoice numbers (PRODUCT §9) across processes: the real server with WORKERS=2 (two
 * processes on one SQLite file, or one PostgreSQL database), and every draft of two accounts issued
 * twice at once, a quarter of them without lines. Each account's issued numbers are INV-000001… with
 * no gap and no duplicate; every other answer is the clean 422 (1280); the refused issues drew no
 * number (the account's counter stands at the count issued).
 */
const DRAFTS = 24;
const GOOD = DRAFTS - DRAFTS / 4;

for (const dialect of DIALECTS) {
  describe(`invoice numbers with WORKERS=2 (${dialect})`, { skip: skipUnless(dialect) }, () => {
    test('concurrent issues across two processes and two accounts are gapless per account', async () => {
      const site = await createSite(dialect, { WORKERS: '2' });
      const accounts = [{ accountId: site.accountId, token: site.token }, await siteAccount(site.db)];
      const server = await startServer(site.env);
      try {
        await until(() => (server.output().match(/listening on .*\(worker \d+\)/g) ?? []).length === 2, 15_000);
        const drafts = await Promise.all(
          accounts.map(async ({ token }) => {
            const client = await request(server.origin, token, 'POST', '/clients', { clients: [{ name: 'C' }] });
            assert.equal(client.status, 200, JSON.stringify(client.body));
            const line = { description: 'Work', quantity: 1, unitPrice: 1 };
            const made = await request(server.origin, token, 'POST', '/invoices', {
              invoices: Array.from({ length: DRAFTS }, (_, k) => ({
                client: { id: client.body.clients[0].id },
                lines: k % 4 === 3 ? [] : [line],
              })),
            });
            assert.equal(made.status, 200, JSON.stringify(made.body));
            return made.body.invoices.map((i: { id: number }) => i.id) as number[];
          }),
        );
        const issues = accounts.flatMap(({ token }, a) =>
          drafts[a].flatMap((id) => [0, 1].map(() => ({ a, id, token }))),
        );
        const answers = await Promise.all(
          issues.map(async (x) => ({
            ...x,
            res: await request(server.origin, x.token, 'POST', `/invoices/${x.id}/issue`),
          })),
        );
        const clean = (r: { status: number; body: any }) =>
          r.status === 200 || (r.status === 422 && r.body.error.code === ERRORS.stateForbids.code);
        const unclean = answers.find((x) => !clean(x.res));
        assert.equal(unclean, undefined, JSON.stringify(unclean?.res.body));
        const expected = Array.from({ length: GOOD }, (_, k) => `INV-${String(k + 1).padStart(6, '0')}`);
        for (const [a, { accountId }] of accounts.entries()) {
          const ok = answers.filter((x) => x.a === a && x.res.status === 200).map((x) => x.res.body.invoices[0]);
          // Each draft with lines issued once, the empty ones never.
          assert.deepEqual(
            ok.map((i) => i.id).sort((p, q) => p - q),
            drafts[a].filter((_, k) => k % 4 !== 3),
          );
          assert.deepEqual(ok.map((i) => i.number).sort(), expected);
          const stored = await site.db.database.db
            .selectFrom('invoices')
            .select('number')
            .where('account_id', '=', accountId)
            .where('number', 'is not', null)
            .orderBy('number')
            .execute();
          assert.deepEqual(
            stored.map((r) => r.number),
            expected,
          );
          const counter = await site.db.database.db
            .selectFrom('counters')
            .select('value')
            .where('account_id', '=', accountId)
            .where('name', '=', 'invoices')
            .executeTakeFirstOrThrow();
          assert.equal(Number(counter.value), GOOD);
        }
      } finally {
        server.child.kill('SIGTERM');
        await server.exited;
        await site.close();
      }
    });
  });
}
