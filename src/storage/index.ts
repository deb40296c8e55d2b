import path from 'node:path';
import type { Readable } from 'node:stream';
import type { Config, S3Config } from '../config.js';
import type { BlobStore, StagedBlob } from './blobs.js';
import { LocalDiskStore } from './local.js';

/**
 * The S3 store, loaded on first use: the AWS SDK costs about 180 ms and 20 MiB to load, which a
 * process on the local store (and every CLI command) need not pay.
 */
class DeferredS3Store implements BlobStore {
  readonly kind = 's3';
  private loaded?: Promise<BlobStore>;
  private store?: BlobStore;

  constructor(private readonly config: S3Config) {}

  private load(): Promise<BlobStore> {
    this.loaded ??= import('./s3.js').then((m) => (this.store = new m.S3Store(this.config)));
    return this.loaded;
  }

  async stage(source: Readable, maxBytes: number): Promise<StagedBlob> {
    return (await this.load()).stage(source, maxBytes);
  }
  async open(sha256: string) {
    return (await this.load()).open(sha256);
  }
  async delete(sha256: string) {
    return (await this.load()).delete(sha256);
  }
  async *digests() {
    yield* (await this.load()).digests();
  }
  async sweep(before?: number) {
    return (await this.load()).sweep(before);
  }
  async check() {
    return (await this.load()).check();
  }
  async close() {
    await this.store?.close();
  }
}

/** The process's store: FILES_STORE=s3 an S3-compatible object store, else the local disk under DATA_DIR. */
export function createStore(config: Config): BlobStore {
  if (config.filesStore === 's3' && config.s3) return new DeferredS3Store(config.s3);
  return new LocalDiskStore(path.join(config.dataDir, 'files'));
}
