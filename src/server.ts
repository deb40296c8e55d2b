import cluster from 'node:cluster';
import fs from 'node:fs';
import { buildApp } from './app.js';
import { ConfigError, loadConfig, sqliteFile, type Config } from './config.js';
import { connect } from './db/index.js';
import { loggerOptions } from './http/logging.js';
import { observeQuery, watchPool } from './http/metrics.js';

/** How long a shutdown waits for requests in flight. */
const SHUTDOWN_GRACE_MS = 10_000;

async function serve(config: Config): Promise<void> {
  const database = await connect({
    databaseUrl: config.databaseUrl,
    sqliteFile: sqliteFile(config),
    observe: observeQuery,
    backgroundCheckpoints: true,
  });
  if (database.pool) watchPool(database.pool);
  const app = await buildApp({
    config,
    database,
    https: config.tlsCertFile
      ? { cert: fs.readFileSync(config.tlsCertFile), key: fs.readFileSync(config.tlsKeyFile!) }
      : undefined,
    logger: loggerOptions(config.logLevel),
  });
  app.addHook('onClose', async () => database.close());
  // A bucket that does not exist or credentials the store refuses stop the start, in words.
  await app.services.blobs.check();

  let closing = false;
  const shutdown = (signal: string) => {
    if (closing) return;
    closing = true;
    app.log.info({ signal }, 'shutting down');
    // Stop accepting, finish what is in flight, then close the database. Bodies still arriving
    // are not waited for once idle (src/http/input/body-timeout.ts); whatever is still open after
    // SHUTDOWN_GRACE_MS is closed, and the process exits whatever happens.
    setTimeout(() => app.server.closeAllConnections(), SHUTDOWN_GRACE_MS).unref();
    setTimeout(() => process.exit(1), SHUTDOWN_GRACE_MS + 5000).unref();
    app.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));

  await app.listen({ host: config.host, port: config.port });
  const scheme = config.tlsCertFile ? 'https' : 'http';
  const host = config.host.includes(':') ? `[${config.host}]` : config.host;
  const port = (app.server.address() as { port: number }).port;
  console.log(`listening on ${scheme}://${host}:${port}${cluster.isWorker ? ` (worker ${process.pid})` : ''}`);
}

async function main(): Promise<void> {
  const config = loadConfig();
  if (config.workers > 1 && cluster.isPrimary) {
    // Migrate once before the workers start, so they never race on the schema.
    const database = await connect({
      databaseUrl: config.databaseUrl,
      sqliteFile: sqliteFile(config),
    });
    await database.close();
    for (let i = 0; i < config.workers; i++) cluster.fork();
    let stopping = false;
    const stop = () => {
      stopping = true;
      for (const w of Object.values(cluster.workers ?? {})) w?.kill('SIGTERM');
    };
    process.on('SIGTERM', stop);
    process.on('SIGINT', stop);
    cluster.on('exit', () => {
      if (stopping && Object.keys(cluster.workers ?? {}).length === 0) process.exit(0);
      if (!stopping) cluster.fork();
    });
    return;
  }
  await serve(config);
}

main().catch((err) => {
  console.error(
    err instanceof ConfigError ? `configuration error: ${err.message}` : `failed to start: ${(err as Error).message}`,
  );
  process.exit(1);
});
