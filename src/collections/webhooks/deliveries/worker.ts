import crypto from 'node:crypto';
import { performance } from 'node:perf_hooks';
import type { Services } from '../../machinery/services.js';
import { attemptAll } from './attempt.js';
import { fanOut } from './fanout.js';
import { leaseDue, type Leased } from './repository.js';

const POLL_MS = 200;
/** Attempts in flight per process, and per webhook: a slow receiver holds at most its own slots. */
const MAX_IN_FLIGHT = 32;
export const PER_WEBHOOK = 8;
/**
 * Sending is background work: while requests keep coming (one arrived in the last 100 ms) and the
 * event loop is busy (over half of the last 100 ms or more), the worker pauses this long between
 * batches, so a backlog of deliveries does not take the CPU the API answers with. Its own work
 * alone never slows it: once requests stop or the load falls, it sends at full pace. Under a
 * sustained full load deliveries therefore lag, and catch up after (docs/events.md).
 */
const BUSY_UTILISATION = 0.5;
const BUSY_PAUSE_MS = 250;
const BUSY_STEP = 50;
const RECENT_MS = 100;

/** Whether the event loop was busy lately, measured over windows of at least 100 ms. */
function loopMeter(): () => boolean {
  let mark = performance.eventLoopUtilization();
  let busy = false;
  return () => {
    const now = performance.eventLoopUtilization();
    const since = performance.eventLoopUtilization(now, mark);
    if (since.idle + since.active >= RECENT_MS) {
      busy = since.utilization > BUSY_UTILISATION;
      mark = now;
    }
    return busy;
  };
}

/** When the last request arrived (performance.now()); the app notes each one (src/app.ts). */
export interface RequestActivity {
  lastRequestAt: number;
}

export interface DeliveryWorker {
  stop(): Promise<void>;
}

export interface WorkerLog {
  warn(obj: object, msg: string): void;
}

/**
 * The background sender, one per process (started when the app is ready, stopped on close). It
 * queues the deliveries of newly committed events (fanout.ts), leases due deliveries
 * from the database and sends each off the request path; the queue is the `deliveries` table and
 * the events past each webhook's cursor, so whatever is pending survives a crash and is sent after
 * a restart.
 */
export function startDeliveryWorker(
  services: Services,
  clock: () => number,
  log?: WorkerLog,
  activity?: RequestActivity,
): DeliveryWorker {
  const owner = `${process.pid}-${crypto.randomBytes(6).toString('hex')}`;
  const running = new Set<Promise<void>>();
  const perWebhook = new Map<number, number>();
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;

  let lastFanOut = -Infinity;
  const stuck = new Set<number>();
  let inFlight = 0;
  const loopBusy = loopMeter();
  const yieldToRequests = () =>
    activity !== undefined && performance.now() - activity.lastRequestAt < RECENT_MS && loopBusy();
  /** A webhook's leased deliveries go out together; when they are done, their slots are free. */
  const run = (ds: Leased[]) => {
    const webhookId = ds[0].webhook_id;
    perWebhook.set(webhookId, (perWebhook.get(webhookId) ?? 0) + ds.length);
    inFlight += ds.length;
    const p = attemptAll(services, ds, owner, clock)
      .catch((err) =>
        log?.warn({ err: (err as Error).message, deliveries: ds.map((d) => d.id) }, 'webhook delivery failed to run'),
      )
      .finally(() => {
        running.delete(p);
        inFlight -= ds.length;
        const n = (perWebhook.get(webhookId) ?? ds.length) - ds.length;
        if (n <= 0) perWebhook.delete(webhookId);
        else perWebhook.set(webhookId, n);
        // Finished attempts free slots: look for more at once, or after a pause while requests are busy.
        schedule(yieldToRequests() ? BUSY_PAUSE_MS : 0);
      });
    running.add(p);
  };

  async function tick(): Promise<void> {
    const now = clock();
    // The events committed since get their deliveries (by this process or another), once a poll:
    // a step queues up to 500 per webhook, more than its 8 slots send in that time; while requests
    // keep the process busy, 50 (queueing is background work too, like sending).
    if (performance.now() - lastFanOut >= POLL_MS) {
      lastFanOut = performance.now();
      // A webhook whose step fails is logged once (until it goes through), and the others go on.
      await fanOut(services.database, now, {
        step: yieldToRequests() ? BUSY_STEP : undefined,
        onStep(webhookId, err) {
          if (!err) stuck.delete(webhookId);
          else if (!stuck.has(webhookId)) {
            stuck.add(webhookId);
            log?.warn({ err: err.message, webhook: webhookId }, "queueing a webhook's deliveries failed (retrying)");
          }
        },
      }).catch((err) => log?.warn({ err: (err as Error).message }, 'queueing deliveries failed (retrying)'));
    }
    const free = MAX_IN_FLIGHT - inFlight;
    if (free > 0) {
      const byWebhook = new Map<number, Leased[]>();
      for (const d of await leaseDue(services.database, owner, now, free, PER_WEBHOOK, perWebhook)) {
        byWebhook.set(d.webhook_id, [...(byWebhook.get(d.webhook_id) ?? []), d]);
      }
      for (const ds of byWebhook.values()) run(ds);
    }
  }

  let ticking = false;
  // A database outage fails every poll: it is logged once, not five times a second.
  let failing = false;
  function schedule(ms: number): void {
    if (stopped || ticking) return;
    clearTimeout(timer);
    timer = setTimeout(() => {
      ticking = true;
      tick()
        .then(() => (failing = false))
        .catch((err) => {
          if (!failing) log?.warn({ err: (err as Error).message }, 'webhook worker poll failed (retrying)');
          failing = true;
        })
        .finally(() => {
          ticking = false;
          schedule(yieldToRequests() ? BUSY_PAUSE_MS : POLL_MS);
        });
    }, ms);
    timer.unref();
  }
  schedule(0);

  return {
    async stop() {
      stopped = true;
      clearTimeout(timer);
      // In-flight attempts end within the send timeout; their outcome is recorded before closing.
      // A poll stuck on an unreachable database does not hold the shutdown for more than 5 s.
      for (let i = 0; ticking && i < 500; i++) await new Promise((r) => setTimeout(r, 10));
      await Promise.allSettled(running);
    },
  };
}
