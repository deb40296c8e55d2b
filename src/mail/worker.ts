import crypto from 'node:crypto';
import type { Services } from '../collections/machinery/services.js';
import { optedOut } from '../collections/messages/repository.js';
import { leaseMessages, type LeasedMessage } from './lease.js';
import { optedOutAttempt, recordOutcomes, type Outcome } from './record.js';
import { smtpSender, type MailSender } from './transport.js';

const POLL_MS = 200;
/** Messages in flight per process (the transport keeps 4 connections to the relay). */
const MAX_IN_FLIGHT = 32;

export interface MailWorker {
  stop(): Promise<void>;
}

export interface MailLog {
  warn(obj: object, msg: string): void;
}

/**
 * The background mail sender, one per process, started when the app is ready (only with SMTP_URL:
 * without it, messages stay queued). The queue is the `messages` table: whatever is queued survives
 * a crash or a restart and is sent after it; each attempt is leased to one process (lease.ts).
 */
export function startMailWorker(
  services: Services,
  clock: () => number,
  log?: MailLog,
  sender: MailSender | undefined = services.config.smtpUrl ? smtpSender(services.config.smtpUrl) : undefined,
): MailWorker | undefined {
  if (!sender) return undefined;
  const mail = sender;
  const owner = `${process.pid}-${crypto.randomBytes(6).toString('hex')}`;
  const from = services.config.mailFrom;
  const running = new Set<Promise<void>>();
  let inFlight = 0;
  let stopped = false;
  let ticking = false;
  let failing = false;
  let timer: NodeJS.Timeout | undefined;

  async function attempt(m: LeasedMessage): Promise<Outcome> {
    // The client may have opted out since the message was queued.
    if (await optedOut(services.database.db, m.account_id, m.client_id, m.to_address))
      return { message: m, attempt: optedOutAttempt };
    const sent = await mail.send({ from, to: m.to_address, subject: m.subject, text: m.body, messageId: m.message_id });
    return { message: m, attempt: sent };
  }

  /** One account's leased messages: sent side by side, their outcomes recorded in one transaction. */
  function run(ms: LeasedMessage[]): void {
    inFlight += ms.length;
    const p = Promise.all(ms.map(attempt))
      .then((outcomes) => recordOutcomes(services, owner, clock(), outcomes))
      .catch((err) =>
        log?.warn({ err: (err as Error).message, messages: ms.map((m) => m.id) }, 'recording messages failed'),
      )
      .finally(() => {
        running.delete(p);
        inFlight -= ms.length;
        schedule(0);
      });
    running.add(p);
  }

  async function tick(): Promise<void> {
    const free = MAX_IN_FLIGHT - inFlight;
    if (free <= 0) return;
    const byAccount = new Map<number, LeasedMessage[]>();
    for (const m of await leaseMessages(services.database, owner, clock(), free))
      byAccount.set(m.account_id, [...(byAccount.get(m.account_id) ?? []), m]);
    for (const ms of byAccount.values()) run(ms);
  }

  function schedule(ms: number): void {
    if (stopped || ticking) return;
    clearTimeout(timer);
    timer = setTimeout(() => {
      ticking = true;
      tick()
        .then(() => (failing = false))
        .catch((err) => {
          if (!failing) log?.warn({ err: (err as Error).message }, 'mail worker poll failed (retrying)');
          failing = true;
        })
        .finally(() => {
          ticking = false;
          schedule(POLL_MS);
        });
    }, ms);
    timer.unref();
  }
  schedule(0);

  return {
    async stop() {
      stopped = true;
      clearTimeout(timer);
      for (let i = 0; ticking && i < 500; i++) await new Promise((r) => setTimeout(r, 10));
      await Promise.allSettled([...running]);
      mail.close();
    },
  };
}
