import type { Config } from './config.js';
import { connect, type Database } from './db/index.js';
import { sqliteFile } from './config.js';
import { registry } from './collections/index.js';
import type { Services } from './collections/machinery/services.js';
import { createWriter, type ChangeHook } from './collections/machinery/write/index.js';
import { recordEvents } from './collections/events/index.js';
import { createStore } from './storage/index.js';

export type { Services };

/**
 * What the database keeps for the collections, derived from their declarations and made at start
 * for tables that lack it (src/db/counted.ts, src/db/versions.ts): row counts for the tables marked
 * `counted`, and a row version (the ETag) for every collection table.
 */
export const DERIVED_TABLES = {
  countedTables: registry.list.filter((c) => c.counted).map((c) => c.table),
  versionedTables: registry.list.map((c) => c.table),
} as const;

/** The features that see every committed change, in the transaction of the change. */
export function changeHooks(): ChangeHook[] {
  return [recordEvents];
}

/** The services of one process on an open database. */
export function createServices(config: Config, database: Database): Services {
  const base = { config, database, registry, blobs: createStore(config) };
  return { ...base, writer: createWriter({ services: base, hooks: changeHooks() }) };
}

/** Opens the configured database (migrated, counters made) and the services on it. */
export async function openServices(config: Config, opts: { poolSize?: number } = {}): Promise<Services> {
  const database = await connect({
    databaseUrl: config.databaseUrl,
    sqliteFile: sqliteFile(config),
    poolSize: opts.poolSize,
    ...DERIVED_TABLES,
  });
  return createServices(config, database);
}
