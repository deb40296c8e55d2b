import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { Transform, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Config } from '../config.js';

/**
 * Where file bytes live. The collection only sees this interface, so an S3-compatible store
 * (stage = multipart upload to a temporary key, commit = copy to the digest key) can replace the
 * local disk without touching it. Bytes are keyed by their sha256: identical content is stored once.
 */
export interface BlobStore {
  /**
   * Streams `source` into a staging area while hashing and counting, never holding it in memory.
   * Over `maxBytes` it rejects with TooLargeError and keeps nothing. `source` is never destroyed,
   * so the caller can still answer the request it came from.
   */
  stage(source: Readable, maxBytes: number): Promise<StagedBlob>;
  /** The bytes stored under a digest, or undefined when there are none. */
  open(sha256: string): Promise<{ stream: Readable; size: number } | undefined>;
  /** Removes the bytes under a digest (no error when already gone). */
  delete(sha256: string): Promise<void>;
}

export interface StagedBlob {
  sha256: string;
  size: number;
  /** Publishes the staged bytes under their digest. Called inside the write transaction. */
  commit(): Promise<void>;
  /** Drops the staged copy unless it was committed; safe to call more than once. */
  discard(): Promise<void>;
}

export class TooLargeError extends Error {
  constructor(readonly limit: number) {
    super(`more than ${limit} bytes`);
  }
}

const DIGEST = /^[0-9a-f]{64}$/;

/** DATA_DIR/files/ab/cdef…: two hex characters of fan-out keep directories small. */
export class LocalDiskStore implements BlobStore {
  private readonly tmp: string;

  constructor(private readonly root: string) {
    this.tmp = path.join(root, 'tmp');
  }

  private pathOf(sha256: string): string {
    // Digests come from our own hashing or the database; the check keeps a bad one from naming any other path.
    if (!DIGEST.test(sha256)) throw new Error('not a sha256 digest');
    return path.join(this.root, sha256.slice(0, 2), sha256.slice(2));
  }

  async stage(source: Readable, maxBytes: number): Promise<StagedBlob> {
    await fs.promises.mkdir(this.tmp, { recursive: true });
    const tmpPath = path.join(this.tmp, crypto.randomBytes(16).toString('hex'));
    const hash = crypto.createHash('sha256');
    let size = 0;
    const meter = new Transform({
      transform(chunk: Buffer, _enc, done) {
        size += chunk.length;
        if (size > maxBytes) return done(new TooLargeError(maxBytes));
        hash.update(chunk);
        done(null, chunk);
      },
    });
    // pipe() rather than pipeline(source, ...): a failure must not destroy the request stream,
    // or the 413 answer could never be sent.
    const out = fs.createWriteStream(tmpPath, { flags: 'wx', mode: 0o600 });
    const written = pipeline(meter, out);
    const onSourceError = (err: Error) => meter.destroy(err);
    source.once('error', onSourceError);
    source.pipe(meter);
    try {
      await written;
    } catch (err) {
      source.unpipe(meter);
      // pipeline rejects at the first error, possibly before the file stream has opened (and so
      // created) its file: it is removed once that stream has closed, or a file could be left behind.
      if (!out.closed) await new Promise<void>((resolve) => out.once('close', () => resolve()));
      await fs.promises.rm(tmpPath, { force: true });
      throw err;
    } finally {
      source.off('error', onSourceError);
    }
    const sha256 = hash.digest('hex');
    const target = this.pathOf(sha256);
    let staged = true;
    return {
      sha256,
      size,
      commit: async () => {
        await fs.promises.mkdir(path.dirname(target), { recursive: true });
        // rename replaces atomically; an existing copy has the same bytes, so dedupe costs nothing.
        await fs.promises.rename(tmpPath, target);
        staged = false;
      },
      discard: async () => {
        if (staged) await fs.promises.rm(tmpPath, { force: true });
        staged = false;
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
}

/** The process's store: the local disk under DATA_DIR. */
export function createStore(config: Config): BlobStore {
  return new LocalDiskStore(path.join(config.dataDir, 'files'));
}
