import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { registry } from '../../src/collections/index.js';
import { DIALECTS, skipUnless } from '../helpers.js';
import { createSite, request, sleep, startServer, type Site } from './process.js';

/**
 * Crash safety: a write load against the real server process, killed with SIGKILL in the middle,
 * restarted, then checked. Every write acknowledged with 200 must be there, and every batch must be
 * all or nothing: each batch carries a unique marker in one field, so each marker is on all of its
 * items or on none.
 */
interface Batch {
  kind: 'create' | 'update';
  collection: 'users' | 'jobs';
  marker: string;
  size: number;
  ids?: number[];
  /** 200 = acknowledged; 0 = no answer (the process died); anything else = refused. */
  status?: number;
}

/** The field that carries a batch's marker, per collection and kind. */
const MARK = {
  users: { create: ['lastName', 'last_name'], update: ['companyName', 'company_name'] },
  jobs: { create: ['title', 'title'], update: ['orderNumber', 'order_number'] },
} as const;

const hasJobs = !!registry.get('jobs');
const CONCURRENCY = 8;

async function writeLoad(
  site: Site,
  origin: string,
  batches: Batch[],
  run: number,
  stop: () => boolean,
): Promise<void> {
  let n = 0;
  // Acknowledged creates not updated yet: each is updated at most once, so its marker stays checkable.
  const pending: Batch[] = [];
  const worker = async (w: number) => {
    while (!stop()) {
      const marker = `r${run}-w${w}-${n++}`;
      const target = n % 3 === 0 ? pending.shift() : undefined;
      let batch: Batch;
      let body: Record<string, unknown[]>;
      if (target) {
        const [field] = MARK[target.collection].update;
        batch = { kind: 'update', collection: target.collection, marker, size: target.ids!.length, ids: target.ids };
        body = { [target.collection]: target.ids!.map((id) => ({ id, [field]: marker })) };
      } else {
        const collection = hasJobs && n % 2 === 0 ? 'jobs' : 'users';
        const size = collection === 'users' ? 5 : 3;
        const [field] = MARK[collection].create;
        const item =
          collection === 'users'
            ? { account: { id: site.accountId }, firstName: 'Load', mobile: '+447700900123' }
            : { description: 'load' };
        batch = { kind: 'create', collection, marker, size };
        body = { [collection]: Array.from({ length: size }, () => ({ ...item, [field]: marker })) };
      }
      batches.push(batch);
      const res = await request(
        origin,
        site.token,
        batch.kind === 'create' ? 'POST' : 'PATCH',
        `/${batch.collection}`,
        body,
      );
      batch.status = res.status;
      if (batch.kind === 'create' && res.status === 200) {
        batch.ids = res.body[batch.collection].map((x: { id: number }) => x.id);
        pending.push(batch);
      }
      assert.ok(
        res.status === 200 || res.status === 0,
        `a write was refused: ${res.status} ${String(JSON.stringify(res.body)).slice(0, 300)}`,
      );
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, (_, w) => worker(w)));
}

/** How many items carry each batch's marker, read straight from the database. */
async function found(site: Site, b: Batch): Promise<number> {
  const [, column] = MARK[b.collection][b.kind];

  let q = (site.db.database.db as any)
    .selectFrom(b.collection)
    .select((eb: any) => eb.fn.countAll().as('n'))
    .where('account_id', '=', site.accountId)
    .where(column, '=', b.marker);
  if (b.kind === 'update') q = q.where('id', 'in', b.ids);
  return Number((await q.executeTakeFirstOrThrow()).n);
}

for (const dialect of DIALECTS) {
  describe(`crash safety: SIGKILL under write load (${dialect})`, { skip: skipUnless(dialect) }, () => {
    test('every acknowledged write survives; no batch is partly applied', { timeout: 120_000 }, async (t) => {
      const site = await createSite(dialect);
      const batches: Batch[] = [];
      try {
        for (const run of [1, 2, 3]) {
          const server = await startServer(site.env);
          let killed = false;
          const load = writeLoad(site, server.origin, batches, run, () => killed);
          await sleep(1200 + run * 400);
          server.child.kill('SIGKILL');
          killed = true;
          await server.exited;
          await load;
        }
        // Restarted after the last kill: recovery at start, and it serves writes again.
        const server = await startServer(site.env);
        try {
          const after = await request(server.origin, site.token, 'POST', '/users', {
            users: [
              { account: { id: site.accountId }, firstName: 'After', lastName: 'Crash', mobile: '+447700900123' },
            ],
          });
          assert.equal(after.status, 200, JSON.stringify(after.body));
        } finally {
          server.child.kill('SIGTERM');
          await server.exited;
        }

        let ackedItems = 0;
        let foundAcked = 0;
        let unknown = 0;
        let unknownApplied = 0;
        for (const b of batches) {
          const n = await found(site, b);
          if (b.status === 200) {
            ackedItems += b.size;
            foundAcked += n;
            assert.equal(
              n,
              b.size,
              `acknowledged ${b.kind} ${b.collection} ${b.marker}: ${n} of ${b.size} items found`,
            );
          } else {
            unknown++;
            if (n > 0) unknownApplied++;
            assert.ok(
              n === 0 || n === b.size,
              `unacknowledged ${b.kind} ${b.marker} partly applied: ${n} of ${b.size}`,
            );
          }
        }
        const acked = batches.filter((b) => b.status === 200).length;
        assert.ok(acked > 20, `too little load to prove anything (${acked} batches)`);
        t.diagnostic(
          `${dialect}: 3 SIGKILLs; ${batches.length} batches sent, ${acked} acknowledged (${ackedItems} item writes), ${foundAcked} found after restart; ` +
            `${unknown} unanswered at the kill, ${unknownApplied} of them fully applied, 0 partly`,
        );
      } finally {
        await site.close();
      }
    });
  });
}
