import { ApiError, validationError, type ApiErrorBody } from '../../errors.js';
import { occurrenceDates, MAX_OCCURRENCES, type Schedule } from '../../domain/maintenance/occurrences.js';
import { parseRule } from '../../domain/maintenance/rrule.js';
import { defineCollection, type TxItemContext } from '../machinery/collection.js';
import { accountMoney, checkCurrencyDecimals } from '../machinery/money.js';
import { agreementActionDocs, cancel } from './actions.js';
import { billPeriods } from '../../domain/maintenance/billing.js';
import { hasEnded, syncOccurrences, todayOf } from './occurrences.js';
import { assetsOfAgreement, clientOfSite, sitesOfAssets } from './repository.js';
import { agreementFields } from './schema.js';

const idOf = (v: unknown): number | null => (v === null || v === undefined ? null : (v as { id: number }).id);

/** What an update would leave, of the members the rules read: the item sent over the stored row. */
function merged({ item, existing }: TxItemContext<'agreements'>) {
  const pick = <T>(name: string, stored: T | undefined): T | undefined =>
    item[name] !== undefined ? (item[name] as T) : stored;
  return {
    client: item.client !== undefined ? idOf(item.client) : (existing?.client_id ?? null),
    site: item.site !== undefined ? idOf(item.site) : (existing?.site_id ?? null),
    startDate: pick<string>('startDate', existing?.start_date),
    endDate: pick<string | null>('endDate', existing?.end_date ?? null) ?? null,
    recurrence: pick<string>('recurrence', existing?.recurrence),
    skipDates: pick<string[]>('skipDates', existing ? (JSON.parse(existing.skip_dates) as string[]) : []) ?? [],
    horizonDays: pick<number>('horizonDays', existing?.horizon_days) ?? 90,
    price: item.price !== undefined ? item.price : (existing?.price ?? null),
    billing: pick<string>('billing', existing?.billing) ?? 'none',
  };
}

function scheduleOf(m: ReturnType<typeof merged>): Schedule | undefined {
  const rule = parseRule(m.recurrence);
  if ('error' in rule || m.startDate === undefined) return undefined;
  return { rule, startDate: m.startDate, endDate: m.endDate, skipDates: m.skipDates, horizonDays: m.horizonDays };
}

/** The earliest start: a rule is expanded from its start, and nothing older is serviced by rule. */
const FIRST_DATE = '1970-01-01';

/** The members that make occurrences: a PATCH of a cancelled agreement that sends one is refused. */
const MAKES_OCCURRENCES = [
  'recurrence',
  'skipDates',
  'startDate',
  'endDate',
  'horizonDays',
  'visitTime',
  'visitMinutes',
  'user',
  'jobTitle',
  'jobDescription',
  'requiredSkills',
  'assets',
  'client',
  'site',
  'name',
];

async function check(ctx: TxItemContext<'agreements'>): Promise<ApiErrorBody[]> {
  const { caller, db, op, item, existing } = ctx;
  if (op === 'delete') return [];
  if (op === 'update' && existing!.state === 'cancelled' && MAKES_OCCURRENCES.some((k) => item[k] !== undefined))
    throw new ApiError('stateForbids', 'the agreement is cancelled: it makes no more occurrences');
  const m = merged(ctx);
  const { exponent } = await ctx.once('money', () => accountMoney(db, caller.accountId));
  const errors: ApiErrorBody[] = checkCurrencyDecimals(agreementFields, item, exponent);
  if (m.site !== null && (item.site !== undefined || item.client !== undefined)) {
    const ofSite = await clientOfSite(db, caller.accountId, m.site);
    // A site that does not exist is reported by the reference check.
    if (ofSite !== undefined && ofSite !== m.client)
      errors.push(validationError('invalid', 'site', "must be a site of the agreement's client"));
  }
  if (item.assets !== undefined || item.site !== undefined) {
    const ids =
      item.assets !== undefined
        ? (item.assets as { id: number }[]).map((a) => a.id)
        : existing
          ? await assetsOfAgreement(db, caller.accountId, existing.id)
          : [];
    const sites = await sitesOfAssets(db, caller.accountId, ids);
    // An asset that is not the account's is the reference failure alone.
    const stray = ids.some((id) => !sites.has(id)) ? [] : ids.filter((id) => sites.get(id) !== m.site);
    if (stray.length)
      errors.push(
        validationError('invalid', 'assets', `assets ${stray.slice(0, 10).join(', ')} are not of the agreement's site`),
      );
  }
  if (m.billing !== 'none' && m.price === null)
    errors.push(validationError('invalid', 'price', `billing '${m.billing}' needs a price`));
  if (m.startDate !== undefined && m.startDate < FIRST_DATE)
    errors.push(validationError('invalid', 'startDate', `must be ${FIRST_DATE} or later`));
  if (m.startDate !== undefined && m.endDate !== null && m.endDate < m.startDate)
    errors.push(validationError('invalid', 'endDate', 'must not be before startDate'));
  const schedule = scheduleOf(m);
  if (schedule && !errors.length) {
    const { today } = await todayOf(db, caller);
    if (occurrenceDates(schedule, today) === undefined)
      errors.push(
        validationError('invalid', 'recurrence', `makes more than ${MAX_OCCURRENCES} occurrences in the horizon`),
      );
  }
  return errors;
}

/**
 * Service agreements and recurring work (PRODUCT §16): a rule whose dates in the horizon are
 * ordinary jobs with one visit each, kept in the same transaction as every change of the
 * agreement (occurrences.ts). Roles as jobs; Contractors 403.
 */
export const agreements = defineCollection({
  name: 'agreements',
  table: 'agreements',
  description:
    'Service agreements and recurring work: an RFC 5545 rule whose dates within the horizon are jobs with one visit each (`agreement`, `occurrence`).',
  fields: agreementFields,
  counted: true,
  example: (ref) => ({
    client: ref('clients'),
    name: 'Boiler maintenance',
    jobTitle: 'Annual boiler service',
    startDate: '2030-01-15',
    recurrence: 'FREQ=YEARLY',
  }),
  actions: { cancel },
  actionDocs: agreementActionDocs,
  policy: {
    read: { administrator: 'all', employee: 'all', contractor: 'none' },
    write: { administrator: 'all', employee: 'all', contractor: 'none' },
    actions: { cancel: {} },
  },
  rules: {
    check,
    // `state`: ended past endDate or the rule's last date; a cancelled agreement stays cancelled.
    async fill(ctx) {
      const { caller, db, op, existing, row } = ctx;
      if (op === 'delete') return;
      const { today } = await todayOf(db, caller);
      // The occurrences are made as of today (after, below): the daily roll starts from tomorrow.
      row.rolled_on = today;
      if (existing?.state === 'cancelled') return;
      const schedule = scheduleOf(merged(ctx));
      if (!schedule) return;
      const state = hasEnded(schedule, today) ? 'ended' : 'active';
      if (state !== (existing?.state ?? 'active')) row.state = state;
    },
    async after({ caller, db, op, changes, id }) {
      if (op === 'delete') return;
      await syncOccurrences(db, changes, caller, id);
      await billPeriods(db, changes, caller, id);
    },
  },
});
