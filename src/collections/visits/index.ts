import { ApiError, validationError, type ApiErrorBody } from '../../http/errors.js';
import { defineCollection, type AuthContext, type Item, type Op, type Row, type WriteContext } from '../machinery/collection.js';
import { untyped } from '../machinery/read.js';
import { visitFields } from './schema.js';

const idOf = (v: unknown) => (v as { id?: number } | null | undefined)?.id;

/**
 * A contractor keeps a visit theirs: they may not hand it to someone else, move it to another job,
 * or delete it (they set `state` to `cancelled` instead).
 */
function authorize(ctx: AuthContext, op: Op, item: Item, existing?: Row): void {
  if (ctx.role !== 'contractor') return;
  if (op === 'delete') throw new ApiError('roleForbids', 'contractors cannot delete visits');
  if (item.user !== undefined && idOf(item.user) !== ctx.userId) throw new ApiError('roleForbids', 'contractors cannot reassign visits');
  if (op === 'update' && item.job !== undefined && idOf(item.job) !== existing?.job_id) {
    throw new ApiError('roleForbids', 'contractors cannot move visits to another job');
  }
}

async function check({ ctx, db }: WriteContext, op: Op, item: Item, existing?: Row): Promise<ApiErrorBody[]> {
  if (op === 'delete') return [];
  const errors: ApiErrorBody[] = [];
  // When only one end changes, compare with the stored other end.
  const start = item.startTime !== undefined ? Date.parse(item.startTime as string) : Number(existing?.start_time);
  const end = item.endTime !== undefined ? Date.parse(item.endTime as string) : Number(existing?.end_time);
  if (!(end > start)) errors.push(validationError('invalid', item.endTime !== undefined ? 'endTime' : 'startTime', 'endTime must be after startTime'));
  // A contractor adds visits only to jobs already assigned to them; any other job looks missing,
  // as it does when they read it. Otherwise a visit would hand them any job of the account.
  if (op === 'create' && ctx.role === 'contractor') {
    const mine = await untyped(db).selectFrom('visits').select('id')
      .where('account_id', '=', ctx.accountId).where('job_id', '=', idOf(item.job)!).where('user_id', '=', ctx.userId)
      .executeTakeFirst();
    if (!mine) errors.push(validationError('reference', 'job'));
  }
  return errors;
}

export const visits = defineCollection({
  name: 'visits',
  table: 'visits',
  description: 'Scheduled work on a job, assigned to one user.',
  fields: visitFields,
  policy: {
    read: { administrator: 'all', employee: 'all', contractor: 'own' },
    write: { administrator: 'all', employee: 'all', contractor: 'own' },
    own: (ctx, eb, table) => eb(`${table}.user_id`, '=', ctx.userId),
    ownsNew: (ctx, item) => idOf(item.user) === ctx.userId,
  },
  rules: { authorize, check },
});
