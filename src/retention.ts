import type { Services } from './collections/machinery/services.js';
import { purgeEvents } from './collections/events/retention.js';
import { purgeLocations } from './collections/locations/retention.js';

/** How often a process purges what is past its retention (both purges are idempotent: any process may run them). */
const PURGE_EVERY_MS = 3_600_000;

export interface Retention {
  stop(): Promise<void>;
}

export interface RetentionLog {
  warn(obj: object, msg: string): void;
}

/**
 * The retention purges, at start and then hourly (one per process, started when the app is
 * ready): events and finished deliveries past `EVENTS_RETENTION_DAYS`, location pings past
 * `LOCATIONS_RETENTION_DAYS`, in batches of 500, each batch its own statement. A stop lets the
 * current batch finish and starts no other.
 */
export function startRetention(services: Services, clock: () => number, log?: RetentionLog): Retention {
  let stopped = false;
  let purging: Promise<unknown> | undefined;
  const going = () => !stopped;
  const purge = () => {
    if (purging) return;
    const now = clock();
    const { config, database } = services;
    purging = purgeEvents(database, now, config.eventsRetentionDays, 500, going)
      .then(() => purgeLocations(database, now, config.locationsRetentionDays, 500, going))
      .catch((err) => log?.warn({ err: (err as Error).message }, 'retention purge (events, locations) failed'))
      .then(() => (purging = undefined));
  };
  purge();
  const timer = setInterval(purge, PURGE_EVERY_MS);
  timer.unref();
  return {
    async stop() {
      stopped = true;
      clearInterval(timer);
      await purging;
    },
  };
}
