import { localDate } from '../../time/local-time.js';
import type { Caller } from '../machinery/collection.js';
import type { Services } from '../machinery/services.js';
import { billPeriods } from '../../domain/maintenance/billing.js';
import { hasEnded, scheduleOfRow, syncOccurrences } from './occurrences.js';
import { accountsWithAgreements, behind, lockForRoll, setRolledOn, setState } from './repository.js';

/**
 * How often a process looks for agreements whose account's day has moved on. The reliability test
 * (test/reliability/maintenance.test.ts) alone sets FSM_TEST_ROLL_EVERY_MS, to roll at once in two processes.
 */
const ROLL_EVERY_MS = Number(process.env.FSM_TEST_ROLL_EVERY_MS) || 60_000;
/** Agreements rolled per account and pass (the rest wait for the next pass, a moment later). */
const BATCH = 200;

/** The caller of background work: no user, no OAuth client (its events have `actor` and `clientId` null). */
function background(services: Services, accountId: number, now: number, clock: () => number): Caller {
  return {
    accountId,
    userId: 0,
    role: 'administrator',
    permissions: new Set(),
    clientId: '',
    now,
    clock,
    publicUrl: services.config.publicUrl,
  };
}

/**
 * One pass of the daily roll (PRODUCT §16): every active agreement whose occurrences were last
 * made before its account's today is brought up to today + its horizon, each in a transaction of
 * its own that holds the agreement's row (PostgreSQL: rows another process rolls are skipped, and
 * it finds them done). Any number of processes may run it at once: one job per agreement and date
 * (the unique index), and an agreement rolled once a day. An agreement past its end becomes
 * `ended`. Returns the number of agreements rolled.
 */
export async function rollAgreements(services: Services, clock: () => number): Promise<number> {
  const db = services.database.db;
  const agreements = services.registry.get('agreements')!;
  let rolled = 0;
  for (const account of await accountsWithAgreements(db)) {
    for (;;) {
      const now = clock();
      const today = localDate(now, account.time_zone);
      const ids = await behind(db, account.id, today, BATCH);
      let done = 0;
      for (const id of ids) {
        const caller = background(services, account.id, now, clock);
        const did = await services.writer.transact(caller, async (tx, changes) => {
          const row = await lockForRoll(tx, account.id, id);
          if (!row || row.state !== 'active' || row.deleted || (row.rolled_on !== null && row.rolled_on >= today))
            return false;
          // The periods begun by today (or by its end) are billed first.
          await billPeriods(tx, changes, caller, id);
          const schedule = scheduleOfRow(row);
          if (schedule && hasEnded(schedule, today)) {
            await changes.touch(agreements, [id]);
            await setState(tx, account.id, id, 'ended', now);
          }
          await syncOccurrences(tx, changes, caller, id);
          await setRolledOn(tx, account.id, id, today);
          await changes.settle();
          return true;
        });
        if (did) done++;
      }
      rolled += done;
      // Rows another process held are left to it; a full batch may have more behind it.
      if (ids.length < BATCH || done === 0) break;
    }
  }
  return rolled;
}

export interface AgreementRoll {
  stop(): Promise<void>;
}

/** The roll in the background of every process, every minute (started when the app is ready). */
export function startAgreementRoll(
  services: Services,
  clock: () => number,
  log?: { warn(obj: object, msg: string): void },
): AgreementRoll {
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<unknown> = Promise.resolve();
  let failing = false;
  const tick = () => {
    running = rollAgreements(services, clock)
      .then(() => (failing = false))
      .catch((err) => {
        if (!failing) log?.warn({ err }, 'the agreements roll failed; it tries again every minute');
        failing = true;
      })
      .finally(() => {
        if (!stopped) schedule();
      });
  };
  const schedule = () => {
    timer = setTimeout(tick, ROLL_EVERY_MS);
    timer.unref();
  };
  schedule();
  return {
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await running;
    },
  };
}
