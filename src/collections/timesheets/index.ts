import { ApiError, validationError, type ApiErrorBody } from '../../errors.js';
import { INT32_MAX } from '../machinery/fields.js';
import { byTheirUser } from '../policy.js';
import { lockUsersTime, overlappingEntries } from '../../domain/crew-time/locks.js';
import { defineCollection, type ItemContext, type TxItemContext } from '../machinery/collection.js';
import { entryUsers, visitJob } from './repository.js';
import { timesheetFields } from './schema.js';

const idOf = (v: unknown) => (v as { id?: number } | null | undefined)?.id;

/** The entry as it is once the write is done: what is sent, else what is stored. */
function resulting({ row, existing }: ItemContext<'timesheets'>) {
  const has = (k: string) => Object.hasOwn(row, k);
  return {
    userId: Number(has('user_id') ? row.user_id : existing?.user_id),
    start: Number(has('start_time') ? row.start_time : existing?.start_time),
    end:
      (has('end_time') ? row.end_time : existing?.end_time) == null
        ? null
        : Number(has('end_time') ? row.end_time : existing?.end_time),
    deleted: Boolean(has('deleted') ? row.deleted : existing?.deleted),
  };
}

/** Employees and Contractors write only their own entries (403), and never hand one to someone else. */
function authorize({ caller, item }: ItemContext<'timesheets'>): void {
  if (caller.role === 'administrator') return;
  if (item.user !== undefined && idOf(item.user) !== caller.userId)
    throw new ApiError('roleForbids', "only Administrators write another user's timesheet entries");
}

/** The longest entry: its `duration` (whole seconds) is an int4 column, at most 2147483647 (about 68 years). */
const MAX_SPAN_MS = (INT32_MAX + 1) * 1000 - 1;
const TOO_LONG = `endTime must be at most ${INT32_MAX} seconds after startTime`;

/** An end before its start, or too far after it, in the item alone (before the transaction). */
function validate({ item }: ItemContext<'timesheets'>): ApiErrorBody[] {
  if (typeof item.startTime !== 'string' || typeof item.endTime !== 'string') return [];
  const span = Date.parse(item.endTime) - Date.parse(item.startTime);
  if (!(span > 0)) return [validationError('invalid', 'endTime', 'endTime must be after startTime')];
  return span > MAX_SPAN_MS ? [validationError('invalid', 'endTime', TOO_LONG)] : [];
}

async function check(ctx: TxItemContext<'timesheets'>): Promise<ApiErrorBody[]> {
  const { caller, db, op, item, existing, row } = ctx;
  if (op === 'delete') return [];
  const errors: ApiErrorBody[] = [];
  if (op === 'update') {
    const { start, end } = resulting(ctx);
    const name = item.endTime !== undefined ? 'endTime' : 'startTime';
    if (end !== null && !(end > start))
      errors.push(validationError('invalid', name, 'endTime must be after startTime'));
    else if (end !== null && end - start > MAX_SPAN_MS) errors.push(validationError('invalid', name, TOO_LONG));
  }
  // The visit is of the entry's job; a visit sent without a job gives its job.
  const visitId = Object.hasOwn(row, 'visit_id') ? row.visit_id : existing?.visit_id;
  if (visitId != null && (item.visit !== undefined || item.job !== undefined)) {
    const job = await visitJob(db, caller.accountId, visitId);
    if (job !== undefined) {
      if (item.job === undefined) row.job_id = job;
      else if (row.job_id !== job) errors.push(validationError('invalid', 'visit', 'the visit is of another job'));
    }
  }
  return errors;
}

export const timesheets = defineCollection({
  name: 'timesheets',
  table: 'timesheets',
  description:
    "Time entries (work, travel, break) of one user; one user's entries never overlap, and a running entry (no endTime) reaches into the future.",
  fields: timesheetFields,
  counted: true,
  textField: 'notes',
  example: (ref) => ({
    user: ref('users'),
    job: ref('jobs'),
    kind: 'travel',
    startTime: '2030-01-01T08:15:00+01:00',
    endTime: '2030-01-01T08:45:00+01:00',
    notes: 'To the first site',
  }),
  policy: {
    read: { administrator: 'all', employee: 'all', contractor: 'own' },
    write: { administrator: 'all', employee: 'own', contractor: 'own' },
    own: byTheirUser,
    ownReads: [],
    ownsNew: (caller, item) => item.user === undefined || idOf(item.user) === caller.userId,
    // A Contractor books time only on the jobs they can see (the job given, or their visit's).
    onSeenJob: 'job',
  },
  rules: {
    validate,
    authorize,
    check,
    /** Crew time's lock order: the users' time (the entries' users, stored and sent), then the entries. */
    async lockFirst({ db, caller, op, items, ids }) {
      const sent = items.flatMap((it) => {
        const id = idOf(it.user);
        return id !== undefined ? [id] : op === 'create' ? [caller.userId] : [];
      });
      const stored = op === 'create' ? [] : await entryUsers(db, caller.accountId, ids);
      await lockUsersTime(db, caller.accountId, [...sent, ...stored]);
    },
    async fill({ op, row, existing, caller }) {
      if (op === 'create' && row.user_id === undefined) row.user_id = caller.userId;
      if (Object.hasOwn(row, 'start_time') || Object.hasOwn(row, 'end_time')) {
        const start = Number(Object.hasOwn(row, 'start_time') ? row.start_time : existing?.start_time);
        const end = Object.hasOwn(row, 'end_time') ? row.end_time : existing?.end_time;
        row.duration = end == null ? null : Math.floor((Number(end) - start) / 1000);
      }
    },
    /**
     * No overlap, under concurrency: the batch's users are locked (in id order) before anything
     * is looked at, once every item was written, so the batch's own entries count too.
     */
    async verify({ db, items }) {
      const live = items.map((ctx) => (ctx.op === 'delete' ? undefined : resulting(ctx)));
      const users = live.flatMap((e) => (e && !e.deleted ? [e.userId] : []));
      if (!users.length) return items.map(() => []);
      const accountId = items[0].caller.accountId;
      await lockUsersTime(db, accountId, users);
      const out: ApiErrorBody[][] = [];
      for (const e of live) {
        // The entry itself is among those found (it overlaps itself): any other is an overlap.
        const found = e && !e.deleted ? await overlappingEntries(db, accountId, e.userId, e.start, e.end) : [];
        out.push(
          found.length > 1
            ? [
                validationError(
                  'invalid',
                  'startTime',
                  "overlaps another of the user's timesheet entries (a running entry reaches into the future)",
                ),
              ]
            : [],
        );
      }
      return out;
    },
  },
});
