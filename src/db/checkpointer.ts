/**
 * SQLite's WAL checkpoints, run on a thread of their own (src/db/index.ts starts it for the
 * server). A checkpoint copies the WAL's pages into the database file and waits for the disk
 * (fsync); run by SQLite after a commit, as it does by default, that wait stopped the event loop
 * and every request with it (measured: a quarter of W4's write throughput). Here this thread's
 * connection does it in two steps whenever something was committed: a PASSIVE checkpoint, which never
 * blocks a reader or a writer, copies the bulk and waits for the disk; then a RESTART checkpoint
 * copies what was committed meanwhile (little) and starts the WAL over, waiting at most 50 ms for
 * a gap between writes (else it stops where a passive one would). The server's own connection
 * checkpoints only past 16 MB of WAL (`wal_autocheckpoint`, set in src/db/index.ts), a safety net
 * for a stream of commits without gaps: the WAL stays bounded as with SQLite's defaults. The
 * durability is SQLite's `synchronous = NORMAL` in WAL mode, as before: a commit is written to the
 * WAL, and the WAL reaches the disk before any checkpoint uses it.
 *
 * The same thread keeps the query planner's statistics up to date (`PRAGMA optimize`, as SQLite
 * advises for long-lived connections): statistics gathered while a table was small make the
 * planner scan it whole later. Measured: `select * from events where id in (8 ids)` planned as a
 * scan with statistics of 10 events took 21 ms per call at 100,000 events instead of 0.02 ms, and
 * held webhook deliveries to 60 a second. When the statistics change the thread says so, and the
 * server's connection reloads them (src/db/sqlite.ts), which re-plans its statements. It keeps
 * ANALYZE's averages and removes its samples of index values (`dropSamples` below).
 */
import { createRequire } from 'node:module';
import { parentPort, workerData } from 'node:worker_threads';
import type SQLite from 'better-sqlite3';

const { file, everyMs, statisticsEveryMs } = workerData as { file: string; everyMs: number; statisticsEveryMs: number };
const Driver = createRequire(import.meta.url)('better-sqlite3') as typeof SQLite;
const db = new Driver(file);
db.pragma('busy_timeout = 50');
db.pragma('wal_autocheckpoint = 0');
// A checkpoint copies WAL frames to the file without the page cache, and ANALYZE below reads a few
// pages per index: 256 KiB instead of better-sqlite3's 16 MB, which this thread's reads filled
// (peak RSS with webhook turns in `npm run bench`: 154 -> 142 MB).
db.pragma('cache_size = -256');
// ANALYZE reads at most about this many rows of each index: milliseconds, whatever the table's size.
db.pragma('analysis_limit = 1000');

// `data_version` moves whenever another connection commits: nothing new, nothing to copy.
let seen = -1;
const timer = setInterval(() => {
  try {
    const version = db.pragma('data_version', { simple: true }) as number;
    if (version === seen) return;
    seen = version;
    db.pragma('wal_checkpoint(PASSIVE)');
    db.pragma('wal_checkpoint(RESTART)');
  } catch {
    // Busy or closing: the next round tries again.
  }
}, everyMs);

/** Whether SQLite made one of its statistics tables yet (the first ANALYZE does). */
const hasTable = (name: string) => !!db.prepare('select 1 from sqlite_schema where name = ?').get(name);

/** The statistics as they stand, or none when nothing was ever analyzed (no sqlite_stat1 yet). */
const snapshot = (): string | null => {
  return hasTable('sqlite_stat1')
    ? (
        db.prepare('select group_concat(tbl || idx || stat, char(10)) as s from sqlite_stat1').get() as {
          s: string | null;
        }
      ).s
    : null;
};

/**
 * Removes ANALYZE's samples of index values (sqlite_stat4; better-sqlite3's SQLite is built with
 * them), keeping its averages (sqlite_stat1). With samples, SQLite lets the value bound to
 * `account_id = ?` choose the plan, and so plans a statement again on every run that binds it:
 * nearly all of ours. Parsing and planning each time cost more than the read (W3 `GET /jobs/ID`:
 * 0.32–0.39 of the bytes ceiling with samples, 0.50–0.52 without, docs/performance.md). Every index
 * of ours leads with the account, so the averages choose the same plans. True when it removed any.
 */
const dropSamples = (): boolean => {
  // Deleting from an empty table would still take the write lock: only when there are samples.
  if (!hasTable('sqlite_stat4') || !db.prepare('select 1 from sqlite_stat4 limit 1').get()) return false;
  db.prepare('delete from sqlite_stat4').run();
  return true;
};

// Every table, not only those this connection queried (0x10000); analyzed when its row count
// moved far from its statistics (0x02). Nothing to do costs a fraction of a millisecond.
let changedSince = -1;
const optimize = () => {
  try {
    const version = db.pragma('data_version', { simple: true }) as number;
    if (version === changedSince) return;
    const before = snapshot();
    // One transaction: the server never loads the statistics with samples.
    const dropped = db.transaction(() => {
      db.pragma('optimize = 0x10002');
      return dropSamples();
    })();
    changedSince = version;
    if (dropped || snapshot() !== before) parentPort!.postMessage('statistics');
  } catch {
    // Busy: the next round tries again.
  }
};
optimize();
const statisticsTimer = setInterval(optimize, statisticsEveryMs);

parentPort!.on('message', (m) => {
  if (m !== 'close') return;
  clearInterval(timer);
  clearInterval(statisticsTimer);
  db.close();
  parentPort!.postMessage('closed');
});
