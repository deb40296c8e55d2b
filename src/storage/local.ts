import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { CLOSE_WAIT_MS, DIGEST, Staging, StoreUnavailableError, type BlobStore, type StagedBlob } from './blobs.js';
import { meter } from './meter.js';

/**
 * Staging files are named `<host>~<pid>~<boot>~<random>`: a process can tell the files of a dead
 * process on its own host (no such pid, or its own pid from an earlier boot, as in a container that
 * restarted) and removes them at start; files of live processes, or of other hosts sharing the
 * directory, are left until they are STAGING_MAX_AGE_MS old.
 */
const HOST = os.hostname().replace(/[^A-Za-z0-9.-]/g, '_');
const BOOT = crypto.randomBytes(6).toString('hex');

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** A staging file left by a process of this host that no longer runs. */
function orphaned(name: string): boolean {
  const [host, pid, boot] = name.split('~');
  if (host !== HOST || !/^\d+$/.test(pid ?? '')) return false;
  return Number(pid) === process.pid ? boot !== BOOT : !alive(Number(pid));
}

/** DATA_DIR/files/ab/cdef…: two hex characters of fan-out keep directories small. */
export class LocalDiskStore implements BlobStore {
  readonly kind = 'local';
  private readonly tmp: string;
  private readonly staging = new Staging();

  constructor(private readonly root: string) {
    this.tmp = path.join(root, 'tmp');
  }

  private pathOf(sha256: string): string {
    // Digests come from our own hashing or the database; the check keeps a bad one from naming any other path.
    if (!DIGEST.test(sha256)) throw new Error('not a sha256 digest');
    return path.join(this.root, sha256.slice(0, 2), sha256.slice(2));
  }

  async stage(source: Readable, maxBytes: number): Promise<StagedBlob> {
    const end = this.staging.begin();
    const metered = meter(source, maxBytes);
    const tmpPath = path.join(this.tmp, `${HOST}~${process.pid}~${BOOT}~${crypto.randomBytes(12).toString('hex')}`);
    let out: fs.WriteStream | undefined;
    try {
      await fs.promises.mkdir(this.tmp, { recursive: true });
      out = fs.createWriteStream(tmpPath, { flags: 'wx', mode: 0o600 });
      await pipeline(metered.stream, out);
    } catch (err) {
      metered.detach();
      metered.stream.destroy();
      // pipeline rejects at the first error, possibly before the file stream has opened (and so
      // created) its file: it is removed once that stream has closed, or a file could be left behind.
      if (out && !out.closed) await new Promise<void>((resolve) => out!.once('close', () => resolve()));
      await fs.promises.rm(tmpPath, { force: true });
      end();
      throw metered.failure() ?? err;
    }
    const sha256 = metered.digest();
    const target = this.pathOf(sha256);
    let staged = true;
    let committed = false;
    return {
      sha256,
      size: metered.size(),
      get committed() {
        return committed;
      },
      commit: async () => {
        if (committed) return; // a batch retried one item at a time commits again
        await fs.promises.mkdir(path.dirname(target), { recursive: true });
        // rename replaces atomically; an existing copy has the same bytes, so dedupe costs nothing.
        await fs.promises.rename(tmpPath, target);
        staged = false;
        committed = true;
      },
      discard: async () => {
        try {
          if (staged) await fs.promises.rm(tmpPath, { force: true });
          staged = false;
        } finally {
          end();
        }
      },
    };
  }

  async open(sha256: string): Promise<{ stream: Readable; size: number } | undefined> {
    const file = this.pathOf(sha256);
    try {
      const handle = await fs.promises.open(file, 'r');
      const { size } = await handle.stat();
      return { stream: handle.createReadStream(), size };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw err;
    }
  }

  async delete(sha256: string): Promise<void> {
    await fs.promises.rm(this.pathOf(sha256), { force: true });
  }

  async *digests(): AsyncIterable<{ sha256: string; modified: number }> {
    const fans = await fs.promises.readdir(this.root).catch(() => [] as string[]);
    for (const fan of fans.filter((f) => /^[0-9a-f]{2}$/.test(f))) {
      for (const rest of await fs.promises.readdir(path.join(this.root, fan)).catch(() => [] as string[])) {
        const sha256 = fan + rest;
        if (!DIGEST.test(sha256)) continue;
        const stat = await fs.promises.stat(path.join(this.root, fan, rest)).catch(() => undefined);
        if (stat) yield { sha256, modified: stat.mtimeMs };
      }
    }
  }

  async sweep(before = 0): Promise<number> {
    let removed = 0;
    for (const name of await fs.promises.readdir(this.tmp).catch(() => [] as string[])) {
      const file = path.join(this.tmp, name);
      const stat = await fs.promises.stat(file).catch(() => undefined);
      if (!stat || !(orphaned(name) || stat.mtimeMs < before)) continue;
      await fs.promises.rm(file, { force: true });
      removed++;
    }
    return removed;
  }

  /** The directory, or the nearest one above it that exists (it is made at the first upload), is writable. */
  async check(): Promise<void> {
    let dir = this.tmp;
    while (!fs.existsSync(dir) && path.dirname(dir) !== dir) dir = path.dirname(dir);
    try {
      await fs.promises.access(dir, fs.constants.W_OK);
    } catch (err) {
      throw new StoreUnavailableError(
        `the file store: ${dir} is not writable (${(err as NodeJS.ErrnoException).code ?? (err as Error).message}), so uploads cannot be kept under ${this.root}`,
      );
    }
  }

  async close(): Promise<void> {
    await this.staging.settled(CLOSE_WAIT_MS);
  }
}
