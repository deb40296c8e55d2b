import pg from 'pg';
import type { Database } from './index.js';
import { sharedOf } from './runner.js';

/**
 * Commits that recorded events, told by account (live streams, src/http/event-stream.ts): on
 * PostgreSQL the NOTIFY each such commit sends on `fsm_events` (migration 081), heard from every
 * process on a connection of its own; elsewhere (SQLite) this process's own commits
 * (src/db/runner.ts `committed`), and the subscriber polls for the others.
 */
export interface CommitSubscription {
  /** Whether commits of other processes are told too (else only this process's). */
  readonly everyProcess: boolean;
  /** Hears commits from now on (PostgreSQL: LISTEN, again after a lost connection); no-op while it does. */
  resume(): void;
  /** Stops listening while nothing needs it (nothing of this process's own commits is lost). */
  pause(): void;
  close(): void;
}

export function subscribeCommits(
  database: Database,
  databaseUrl: string | undefined,
  told: (account: number) => void,
  onError: (err: unknown) => void,
): CommitSubscription {
  if (!database.dialect.commitNotifications) {
    const own = (accounts: ReadonlySet<number>) => {
      for (const a of accounts) told(a);
    };
    sharedOf(database.db).eventsCommitted.add(own);
    return {
      everyProcess: false,
      resume() {},
      pause() {},
      close: () => void sharedOf(database.db).eventsCommitted.delete(own),
    };
  }
  // The client listening, or connecting to: one at a time; a paused or replaced one is ended.
  let current: pg.Client | undefined;
  const end = () => {
    const l = current;
    current = undefined;
    if (l) void l.end().catch(() => {});
  };
  return {
    everyProcess: true,
    resume() {
      if (current || !databaseUrl) return;
      const client = new pg.Client({ connectionString: databaseUrl });
      current = client;
      client.on('notification', (m) => told(Number(m.payload)));
      client.on('error', () => {
        // Lost: the subscriber's next resume() listens again.
        if (current === client) current = undefined;
      });
      void (async () => {
        try {
          await client.connect();
          await client.query('listen fsm_events');
          // Paused (or replaced) while it connected.
          if (current !== client) await client.end();
        } catch (err) {
          if (current !== client) return;
          current = undefined;
          onError(err);
        }
      })();
    },
    pause: end,
    close: end,
  };
}
