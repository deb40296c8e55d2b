import type { Config } from '../../config.js';
import type { Database } from '../../db/index.js';
import type { BlobStore } from '../../storage/blobs.js';
import type { Registry } from './registry.js';
import type { Writer } from './write/index.js';

/** What the HTTP layer, the CLI and actions work with, made once per process (src/services.ts). */
export interface Services {
  config: Config;
  database: Database;
  registry: Registry;
  writer: Writer;
  /** Where uploaded bytes live. */
  blobs: BlobStore;
}
