import type { Readable } from 'node:stream';

/**
 * Where file bytes live. The collection only sees this interface; `LocalDiskStore` (DATA_DIR/files,
 * src/storage/local.ts) and `S3Store` (an S3-compatible object store, src/storage/s3.ts) implement
 * it, and src/storage/index.ts picks one from FILES_STORE. Bytes are keyed by their sha256:
 * identical content is stored once. An upload is staged (streamed to a temporary place while it is
 * hashed and counted), then committed under its digest inside the write transaction.
 */
export interface BlobStore {
  /** `local` or `s3`, for messages. */
  readonly kind: string;
  /**
   * Streams `source` into a staging area while hashing and counting, holding at most a bounded
   * buffer of it. Over `maxBytes` it rejects with TooLargeError and keeps nothing; a source that
   * fails or closes before its end rejects with SourceError; a store that cannot be reached rejects
   * with StoreUnavailableError. `source` is never destroyed, so the caller can still answer.
   */
  stage(source: Readable, maxBytes: number): Promise<StagedBlob>;
  /** The bytes stored under a digest, or undefined when there are none. */
  open(sha256: string): Promise<{ stream: Readable; size: number } | undefined>;
  /** Removes the bytes under a digest (no error when already gone). */
  delete(sha256: string): Promise<void>;
  /** The digests stored, with when each was written (for the sweep of bytes no row references). */
  digests(): AsyncIterable<{ sha256: string; modified: number }>;
  /**
   * Removes what uploads abandoned: staging this process could not remove when it tried (the store
   * was down), staging whose process is known to be gone, and, given `before` (ms since the epoch),
   * staging untouched since then. Without `before` it is cheap enough to run every few seconds.
   * Returns how many things it removed.
   */
  sweep(before?: number): Promise<number>;
  /** Throws StoreUnavailableError with a message for the operator when the store is not usable. */
  check(): Promise<void>;
  /**
   * The process is stopping: waits (a few seconds at most) until every upload staged here was
   * committed or discarded, so no staging outlives the process, then releases connections.
   */
  close(): Promise<void>;
}

export interface StagedBlob {
  sha256: string;
  size: number;
  /** True once commit() has published the bytes under their digest. */
  readonly committed: boolean;
  /** Publishes the staged bytes under their digest. Called inside the write transaction. */
  commit(): Promise<void>;
  /** Drops whatever is left of the staged copy; safe to call more than once. */
  discard(): Promise<void>;
}

export class TooLargeError extends Error {
  constructor(readonly limit: number) {
    super(`more than ${limit} bytes`);
  }
}

/** The body being uploaded failed or ended early (a client gone, a truncated multipart part). */
export class SourceError extends Error {}

/**
 * The store could not be reached or refused the request. The message is for the operator (it may
 * name the bucket or the endpoint); clients only ever see a generic 503.
 */
export class StoreUnavailableError extends Error {}

export const DIGEST = /^[0-9a-f]{64}$/;

/**
 * Staging in progress, from the start of `stage` until its staging is gone (discarded, or failed):
 * a stopping process waits for it, since a request whose connection was closed at shutdown still
 * removes its staging after the server has stopped listening.
 */
export class Staging {
  private readonly live = new Set<Promise<void>>();

  /** Starts tracking; the returned function ends it. */
  begin(): () => void {
    let end!: () => void;
    const done = new Promise<void>((resolve) => (end = resolve));
    this.live.add(done);
    void done.then(() => this.live.delete(done));
    return end;
  }

  async settled(ms: number): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([Promise.all(this.live), new Promise((resolve) => (timer = setTimeout(resolve, ms)))]).finally(
      () => clearTimeout(timer),
    );
  }
}

/** How long a stopping process waits for staging in progress to be removed. */
export const CLOSE_WAIT_MS = 5000;

/** How long staging may sit untouched before a sweep removes it: an upload in progress never does. */
export const STAGING_MAX_AGE_MS = 60 * 60 * 1000;
