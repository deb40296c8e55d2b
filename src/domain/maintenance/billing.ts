import { insertRows, untyped, type Executor } from '../../db/runner.js';
import { addMonths } from './dates.js';
import { lastDate, parseRule } from './rrule.js';
import { localDate } from '../../time/local-time.js';
import type { Caller } from '../../collections/machinery/collection.js';
import type { Line } from '../../collections/machinery/lines.js';
import {
  MONEY_SCALE,
  QUANTITY_SCALE,
  accountMoney,
  fromScaled,
  lineAmounts,
  toScaled,
} from '../../collections/machinery/money.js';
import type { ChangeRecording } from '../../collections/machinery/contracts.js';

/**
 * An agreement's billing (PRODUCT §16) as draft invoices (§9): `perVisit`, one when a visit of an
 * occurrence is checked out; `monthly`, `quarterly`, `yearly`, one for every period begun (its
 * first day today or earlier, and not past `endDate` or the rule's last date) while the agreement is active. Each draft
 * has one line (the agreement's `name`, quantity 1, its `price`) and `agreement {id}`. The unique
 * indexes of migration 112, (account, agreement, period) and (account, visit), make one invoice
 * per period or visit whatever runs at once: a writer that finds one made meanwhile skips it.
 * Here, not in a collection: agreements (on a write, the roll, cancel) and visits (check-out) ask it.
 */

/** Months per period of each periodic billing. */
const PERIOD_MONTHS: Record<string, number> = { monthly: 1, quarterly: 3, yearly: 12 };

interface Billed {
  id: number;
  client_id: number;
  name: string;
  price: number | string | bigint | null;
  billing: string;
}

/** The invoice row of a draft billing the agreement once (its one line: name, 1, price). */
async function draftRow(db: Executor, accountId: number, a: Billed, now: number): Promise<Record<string, unknown>> {
  const { currency, exponent } = await accountMoney(db, accountId);
  const price = Number(a.price);
  const amounts = lineAmounts(toScaled(1, QUANTITY_SCALE), price, null, exponent);
  const line: Line = {
    description: a.name,
    quantity: 1,
    unitPrice: fromScaled(price, MONEY_SCALE),
    taxRate: null,
    product: null,
    kind: null,
    taxPercent: null,
    subtotal: fromScaled(amounts.subtotal, MONEY_SCALE),
    tax: fromScaled(amounts.tax, MONEY_SCALE),
    total: fromScaled(amounts.total, MONEY_SCALE),
    charge: null,
  };
  return {
    account_id: accountId,
    client_id: a.client_id,
    state: 'draft',
    lines: JSON.stringify([line]),
    subtotal: amounts.subtotal,
    tax_total: amounts.tax,
    total: amounts.total,
    amount_paid: 0,
    balance: amounts.total,
    currency,
    deleted: 0,
    created: now,
    modified: now,
    agreement_id: a.id,
  };
}

/** Inserts the drafts, skipping those another writer made meanwhile (`key`), each an event. */
async function insertDrafts(db: Executor, changes: ChangeRecording, rows: Record<string, unknown>[], key: string) {
  if (!rows.length) return 0;
  const made = await insertRows<{ id: number }>(untyped(db), 'invoices', rows, ['id'], {
    skipConflictsOn: ['account_id', ...(key === 'agreement_period' ? ['agreement_id'] : []), key],
  });
  changes.created(
    changes.collection('invoices'),
    made.map((m) => m.id),
  );
  return made.length;
}

/** The first day of every period of a periodic billing begun by `until` (inclusive). */
export function periodsBegun(startDate: string, billing: string, until: string): string[] {
  const months = PERIOD_MONTHS[billing];
  if (months === undefined) return [];
  const out: string[] = [];
  for (let k = 0; ; k++) {
    const first = addMonths(startDate, k * months);
    if (first > until) return out;
    out.push(first);
  }
}

/**
 * In the transaction that writes or rolls an active agreement (its row held): a draft for every
 * period begun by today (and by `endDate`) that has none yet. Returns the number of drafts made.
 */
export async function billPeriods(
  db: Executor,
  changes: ChangeRecording,
  caller: Caller,
  agreementId: number,
): Promise<number> {
  const accountId = caller.accountId;
  const a = await db
    .selectFrom('agreements')
    .select([
      'id',
      'client_id',
      'name',
      'price',
      'billing',
      'start_date',
      'end_date',
      'recurrence',
      'state',
      'deleted',
      'billed_through',
    ])
    .where('account_id', '=', accountId)
    .where('id', '=', agreementId)
    .executeTakeFirst();
  if (!a || a.state === 'cancelled' || a.deleted || a.price === null || !(a.billing in PERIOD_MONTHS)) return 0;
  const today = localDate(caller.now, (await accountMoney(db, accountId)).timeZone);
  // The last day it is in force: today, else its end (endDate, or the rule's last date).
  const rule = parseRule(a.recurrence);
  const last = 'error' in rule ? undefined : lastDate(rule, a.start_date);
  const until = [today, a.end_date, last].reduce<string>((x, y) => (y != null && y < x ? y : x), today);
  const periods = periodsBegun(a.start_date, a.billing, until);
  if (!periods.length) return 0;
  // Periods after the last one billed: a draft deleted since is not made again.
  const wanted = periods.filter((p) => a.billed_through === null || p > a.billed_through);
  if (!wanted.length) return 0;
  await db
    .updateTable('agreements')
    .set({ billed_through: periods[periods.length - 1] })
    .where('account_id', '=', accountId)
    .where('id', '=', agreementId)
    .execute();
  const base = await draftRow(db, accountId, a, caller.now);
  return insertDrafts(
    db,
    changes,
    wanted.map((p) => ({ ...base, agreement_period: p })),
    'agreement_period',
  );
}

/**
 * In the check-out's transaction (the visit locked): the draft of a visit of an occurrence whose
 * agreement bills `perVisit`, unless the visit has one already. Returns whether one was made.
 */
export async function billVisit(
  db: Executor,
  changes: ChangeRecording,
  caller: Caller,
  visit: { id: number; job_id: number },
): Promise<boolean> {
  const accountId = caller.accountId;
  const a = await db
    .selectFrom('jobs')
    .innerJoin('agreements', (j) =>
      j.onRef('agreements.account_id', '=', 'jobs.account_id').onRef('agreements.id', '=', 'jobs.agreement_id'),
    )
    .select(['agreements.id', 'agreements.client_id', 'agreements.name', 'agreements.price', 'agreements.billing'])
    .where('jobs.account_id', '=', accountId)
    .where('jobs.id', '=', visit.job_id)
    .executeTakeFirst();
  if (!a || a.billing !== 'perVisit' || a.price === null) return false;
  const row = { ...(await draftRow(db, accountId, a, caller.now)), job_id: visit.job_id, agreement_visit_id: visit.id };
  return (await insertDrafts(db, changes, [row], 'agreement_visit_id')) > 0;
}
