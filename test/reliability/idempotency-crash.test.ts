import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { DIALECTS, skipUnless } from '../helpers.js';
import { createSite, headers, startServer, type Site } from './process.js';

/**
 * Idempotency-Key across a crash: the server is killed (SIGKILL, by the hook the crash test sets
 * with FSM_TEST_KILL_AFTER_COMMIT) after the write and its kept answer committed and before the
 * answer left. The client saw nothing; after a restart its retry gets the committed answer, and
 * the write was applied once.
 */
async function send(origin: string, site: Site, key: string, body: unknown) {
  try {
    const res = await fetch(`${origin}/jobs`, {
      method: 'POST',
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(15_000),
      headers: { ...headers(site.token), 'idempotency-key': key },
    });
    return { status: res.status, replayed: res.headers.get('idempotency-replayed'), body: await res.json() };
  } catch {
    return { status: 0, replayed: null, body: undefined };
  }
}

for (const dialect of DIALECTS) {
  describe(
    `Idempotency-Key survives a crash between commit and answer (${dialect})`,
    { skip: skipUnless(dialect) },
    () => {
      test(
        'SIGKILL after the commit, restart, retry: the committed answer, and one job',
        { timeout: 60_000 },
        async () => {
          const site = await createSite(dialect);
          const db = site.db.database.db;
          const title = `crash-${Date.now()}`;
          const body = { jobs: [{ title }, { title }] };
          const jobs = async () =>
            (
              await db
                .selectFrom('jobs')
                .select('id')
                .where('account_id', '=', site.accountId)
                .where('title', '=', title)
                .execute()
            ).map((r) => r.id);
          try {
            const doomed = await startServer({ ...site.env, FSM_TEST_KILL_AFTER_COMMIT: '1' });
            const lost = await send(doomed.origin, site, 'crash-key', body);
            await doomed.exited;
            assert.equal(lost.status, 0, 'the answer must never have left the process');
            const committed = await jobs();
            assert.equal(committed.length, 2, 'the write committed before the kill');
            const kept = await db
              .selectFrom('idempotency_keys')
              .select(['state', 'status'])
              .where('key', '=', 'crash-key')
              .executeTakeFirstOrThrow();
            assert.deepEqual(kept, { state: 'done', status: 200 });

            const server = await startServer(site.env);
            try {
              const retry = await send(server.origin, site, 'crash-key', body);
              assert.equal(retry.status, 200, JSON.stringify(retry.body));
              assert.equal(retry.replayed, 'true');
              assert.deepEqual(
                retry.body.jobs.map((j: { id: number }) => j.id),
                committed,
              );
              assert.deepEqual(await jobs(), committed);
              // Under another key the same body is a new request: two more jobs, where the retry made none.
              const fresh = await send(server.origin, site, 'another-key', body);
              assert.equal(fresh.status, 200);
              assert.equal((await jobs()).length, 4);
            } finally {
              server.child.kill('SIGTERM');
              await server.exited;
            }
          } finally {
            await site.close();
          }
        },
      );
    },
  );
}
