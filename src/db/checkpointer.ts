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
 */
import { createRequire } from 'node:module';
import { parentPort, workerData } from 'node:worker_threads';
import type SQLite from 'better-sqlite3';

const { file, everyMs } = workerData as { file: string; everyMs: number };
const Driver = createRequire(import.meta.url)('better-sqlite3') as typeof SQLite;
const db = new Driver(file);
db.pragma('busy_timeout = 50');
db.pragma('wal_autocheckpoint = 0');

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

parentPort!.on('message', (m) => {
  if (m !== 'close') return;
  clearInterval(timer);
  db.close();
  parentPort!.postMessage('closed');
});
