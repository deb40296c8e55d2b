import type { Config } from './config.js';
import { connect, type Database } from './db/index.js';
import { sqliteFile } from './config.js';
import { registry } from './collections/index.js';
import type { Services } from './collections/machinery/services.js';
import { createWriter, type ChangeHook } from './collections/machinery/write/index.js';
import { recordEvents } from './collections/events/index.js';
import { createStore } from './storage/index.js';

export type { Services };

/** The features that see every committed change, in the transaction of the change. */
export function changeHooks(): ChangeHook[] {
  return [recordEvents];
}

/** The services of one process on an open database. */
export function createServices(config: Config, database: Database): Services {
  const base = { config, database, registry, blobs: createStore(config) };
  return { ...base, writer: createWriter({ services: base, hooks: changeHooks() }) };
}

/** Opens the configured database (migrated) and the services on it. */
export async function openServices(config: Config, opts: { poolSize?: number } = {}): Promise<Services> {
  const database = await connect({
    databaseUrl: config.databaseUrl,
    sqliteFile: sqliteFile(config),
    poolSize: opts.poolSize,
  });
  return createServices(config, database);
}
