import pg from 'pg';
import { Kysely, PostgresDialect, type PostgresPool, type PostgresPoolClient, type Transaction } from 'kysely';
import { POSTGRES } from './dialect.js';
import { runNamed } from './described.js';
import type { Database, DatabaseOptions } from './index.js';
import { kyselyLog } from './observe.js';
import { attach, committed, newShared, preparedTexts, type Executor } from './runner.js';
import type { DB } from './types.js';

// int8 (counts, bigint columns) and numeric come back as strings from pg by default.
pg.types.setTypeParser(20, (v) => Number(v));
pg.types.setTypeParser(1700, (v) => Number(v));

/**
 * The connection's row-count slot (src/db/counted.ts, migration 012): the lowest number no other
 * live connection to the database holds, kept for the connection's life by a session advisory lock
 * (released when it closes), and told to the count triggers as the session setting `fsm.slot`.
 * Two connections never share a slot, so two transactions never wait on each other's row counts.
 */
const TAKE_SLOT = `select set_config('fsm.slot', (select n::text from generate_series(1, 10000) n
  where pg_try_advisory_lock(hashtext('fsm.slot'), n) limit 1), false)`;

/** PostgreSQL through a pg pool. */
export function openPostgres(opts: DatabaseOptions & { databaseUrl: string }): Database {
  const pool = new pg.Pool({ connectionString: opts.databaseUrl, max: opts.poolSize ?? 10 });
  // A dropped connection must not crash the process; the next query reports the failure.
  pool.on('error', () => {});
  // Nor may one dropped while checked out (terminated backend, restart): without a listener the
  // client's 'error' event would be unhandled and kill the process. The query itself still fails.
  pool.on('connect', (client) => {
    client.on('error', () => {});
    // Queued before anything the pool's user sends on this connection.
    client.query(TAKE_SLOT).catch(() => {});
  });
  const db = new Kysely<DB>({
    dialect: new PostgresDialect({ pool: namingPool(pool) }),
    log: kyselyLog('postgres', opts.observe),
  });
  const shared = newShared(POSTGRES);
  attach(db, shared);
  return {
    db,
    dialect: POSTGRES,
    transaction: async <T>(fn: (tx: Executor) => Promise<T>) => {
      for (let attempt = 1; ; attempt++) {
        let done: Transaction<DB> | undefined;
        try {
          const result = await db.transaction().execute((tx) => {
            attach(tx, shared, { transaction: true });
            done = tx;
            return fn(tx);
          });
          committed(done!);
          return result;
        } catch (err) {
          // Every path takes its locks in one order (docs/design.md), so a deadlock is not expected;
          // should one happen all the same, PostgreSQL rolled the victim back whole and it runs again.
          if ((err as { code?: string }).code !== DEADLOCK || attempt >= DEADLOCK_ATTEMPTS) throw err;
          await new Promise((r) => setTimeout(r, Math.random() * 20 * attempt));
        }
      }
    },
    // One read-only REPEATABLE READ transaction: every statement sees the same snapshot.
    snapshot: <T>(fn: (tx: Executor) => Promise<T>) =>
      db
        .transaction()
        .setIsolationLevel('repeatable read')
        .setAccessMode('read only')
        .execute((tx) => {
          attach(tx, shared, { transaction: true });
          return fn(tx);
        }),
    close: () => db.destroy(),
    pool,
  };
}

/** PostgreSQL's deadlock_detected, and how often a transaction it chose as the victim is run. */
const DEADLOCK = '40P01';
const DEADLOCK_ATTEMPTS = 3;

/**
 * Kysely sends every statement unnamed, so PostgreSQL parses and plans it on every execution; with
 * a 4-table join for the token lookup on each request, that was most of W3's database time. The
 * statements the runner builds once (src/db/runner.ts `preparedTexts`) are given a name per SQL
 * text, so each connection parses them once. This is the pool Kysely is given: pg's own, with its
 * clients seen through a wrapper that names those statements (pg's public `{name, text, values}`).
 */
function namingPool(pool: pg.Pool): PostgresPool {
  const wrappers = new WeakMap<pg.PoolClient, PostgresPoolClient>();
  return {
    async connect() {
      const client = await pool.connect();
      let wrapper = wrappers.get(client);
      if (!wrapper) {
        const query = client.query.bind(client) as (...args: unknown[]) => Promise<pg.QueryResult>;
        wrapper = {
          query: ((text: string, values?: unknown[]) =>
            values?.length && preparedTexts.has(text)
              ? runNamed(query, { name: nameOf(text), text, values })
              : query(text, values)) as unknown as PostgresPoolClient['query'],
          release: () => client.release(),
        };
        wrappers.set(client, wrapper);
      }
      return wrapper;
    },
    end: () => pool.end(),
  };
}

const statementNames = new Map<string, string>();
function nameOf(text: string): string {
  let name = statementNames.get(text);
  if (name === undefined) statementNames.set(text, (name = `fsm${statementNames.size}`));
  return name;
}
