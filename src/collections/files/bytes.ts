import type { Database } from '../../db/index.js';
import { withTransaction, type Executor } from '../../db/tx.js';
import { dialectOf } from '../../db/runner.js';
import { StoreUnavailableError, type BlobStore } from '../../storage/blobs.js';

/**
 * The bytes of a digest exist exactly while a `files` row references it. Everything that adds or
 * removes them runs under the digest's lock, in a transaction: an upload publishes its bytes inside
 * its create transaction; a removal checks that no row (of any account: identical content is
 * stored once) references the digest, then removes the bytes. So a removal racing an upload of the
 * same content either runs first (and the upload publishes its own copy again) or sees its row.
 * These queries are the only ones without `account_id`: the bytes belong to no one account.
 */
export async function lockDigest(db: Executor, sha256: string): Promise<void> {
  // A transaction-scoped lock where writers run side by side (nothing where they are serial).
  await dialectOf(db).lockKey(db, `files:${sha256}`);
}

/**
 * Removes the bytes of each digest that no row references any more. A store that cannot be reached
 * leaves the digest in `file_deletions`, retried by `retryDeletions` until the store is back.
 * Returns false when the store was unavailable (the rest waits for the next try).
 */
export async function collectBytes(
  database: Database,
  blobs: BlobStore,
  digests: string[],
  now: number,
): Promise<boolean> {
  const all = [...new Set(digests)];
  for (const [i, sha256] of all.entries()) {
    try {
      await withTransaction(database, async (db) => {
        await lockDigest(db, sha256);
        const used = await db.selectFrom('files').select('id').where('sha256', '=', sha256).limit(1).executeTakeFirst();
        if (!used) await blobs.delete(sha256);
        await db.deleteFrom('file_deletions').where('sha256', '=', sha256).execute();
      });
    } catch (err) {
      if (!(err instanceof StoreUnavailableError)) continue; // the database: the orphan sweep finds the bytes later
      // The store is down: this digest and the rest wait for it.
      await database.db
        .insertInto('file_deletions')
        .values(all.slice(i).map((d) => ({ sha256: d, since: now })))
        .onConflict((oc) => oc.column('sha256').doNothing())
        .execute()
        .catch(() => {});
      return false;
    }
  }
  return true;
}

/** Removals that failed while the store was down, in the order they failed; stops at the first that fails again. */
export async function retryDeletions(database: Database, blobs: BlobStore, now: number): Promise<void> {
  const pending = await database.db
    .selectFrom('file_deletions')
    .select('sha256')
    .orderBy('since')
    .orderBy('sha256')
    .limit(100)
    .execute();
  if (pending.length)
    await collectBytes(
      database,
      blobs,
      pending.map((r) => r.sha256),
      now,
    );
}

/**
 * Bytes no row references, written before `before`: left by a process killed between publishing
 * an upload's bytes and its commit, or by a removal the database could not record. The age bound
 * keeps the sweep clear of anything an upload in progress may be about to reference.
 */
export async function sweepOrphans(database: Database, blobs: BlobStore, before: number, now: number): Promise<number> {
  let batch: string[] = [];
  let removed = 0;
  const flush = async () => {
    const used = new Set(
      (await database.db.selectFrom('files').select('sha256').distinct().where('sha256', 'in', batch).execute()).map(
        (r) => r.sha256,
      ),
    );
    const unused = batch.filter((d) => !used.has(d));
    if (unused.length && !(await collectBytes(database, blobs, unused, now)))
      throw new StoreUnavailableError('the file store became unavailable during the sweep');
    removed += unused.length;
    batch = [];
  };
  for await (const d of blobs.digests()) {
    if (d.modified >= before) continue;
    batch.push(d.sha256);
    if (batch.length === 100) await flush();
  }
  if (batch.length) await flush();
  return removed;
}
