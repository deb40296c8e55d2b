import { ApiError, validationError, type ApiErrorBody } from '../../errors.js';
import { byTheirUser } from '../policy.js';
import { defineCollection, type ItemContext, type TxItemContext } from '../machinery/collection.js';
import { visitFields } from './schema.js';
import { checkIn, checkOut, visitActionDocs } from './actions.js';
import { onMyWay, onMyWayDoc } from './on-my-way.js';

const idOf = (v: unknown) => (v as { id?: number } | null | undefined)?.id;

/**
 * A contractor keeps a visit theirs: they may not hand it to someone else, move it to another job,
 * or delete it (they set `state` to `cancelled` instead).
 */
function authorize({ caller, op, item, existing }: ItemContext<'visits'>): void {
  if (caller.role !== 'contractor') return;
  if (op === 'delete') throw new ApiError('roleForbids', 'contractors cannot delete visits');
  if (item.user !== undefined && idOf(item.user) !== caller.userId)
    throw new ApiError('roleForbids', 'contractors cannot reassign visits');
  if (op === 'update' && item.job !== undefined && idOf(item.job) !== existing?.job_id) {
    throw new ApiError('roleForbids', 'contractors cannot move visits to another job');
  }
}

async function check({ op, item, existing }: TxItemContext<'visits'>): Promise<ApiErrorBody[]> {
  if (op === 'delete') return [];
  const errors: ApiErrorBody[] = [];
  // When only one end changes, compare with the stored other end.
  const start = item.startTime !== undefined ? Date.parse(item.startTime as string) : Number(existing?.start_time);
  const end = item.endTime !== undefined ? Date.parse(item.endTime as string) : Number(existing?.end_time);
  if (!(end > start))
    errors.push(
      validationError(
        'invalid',
        item.endTime !== undefined ? 'endTime' : 'startTime',
        'endTime must be after startTime',
      ),
    );
  errors.push(...arrivalWindowErrors(item, existing));
  return errors;
}

/**
 * The promised arrival window (PRODUCT §15): both ends or neither, the end after the start; when
 * a write changes one end, the stored other end counts.
 */
function arrivalWindowErrors(
  item: Record<string, unknown>,
  existing: Record<string, unknown> | undefined,
): ApiErrorBody[] {
  if (item.arrivalWindowStart === undefined && item.arrivalWindowEnd === undefined) return [];
  const end = (sent: unknown, stored: unknown) =>
    sent !== undefined ? (sent === null ? null : Date.parse(sent as string)) : stored == null ? null : Number(stored);
  const from = end(item.arrivalWindowStart, existing?.arrival_window_start);
  const until = end(item.arrivalWindowEnd, existing?.arrival_window_end);
  const named = item.arrivalWindowEnd !== undefined ? 'arrivalWindowEnd' : 'arrivalWindowStart';
  if ((from === null) !== (until === null))
    return [
      validationError('invalid', named, 'arrivalWindowStart and arrivalWindowEnd are given together, or neither'),
    ];
  if (from !== null && !(until! > from))
    return [validationError('invalid', named, 'arrivalWindowEnd must be after arrivalWindowStart')];
  return [];
}

export const visits = defineCollection({
  name: 'visits',
  table: 'visits',
  description: 'Scheduled work on a job, assigned to one user.',
  fields: visitFields,
  customFields: true,
  counted: true,
  example: (ref) => ({
    job: ref('jobs'),
    user: ref('users'),
    label: 'First visit',
    startTime: '2030-01-01T09:00:00+01:00',
    endTime: '2030-01-01T11:00:00+01:00',
  }),
  policy: {
    read: { administrator: 'all', employee: 'all', contractor: 'own' },
    write: { administrator: 'all', employee: 'all', contractor: 'own' },
    actions: { checkIn: {}, checkOut: {}, onMyWay: {} },
    own: byTheirUser,
    ownReads: [],
    ownsNew: (caller, item) => idOf(item.user) === caller.userId,
    // A Contractor adds visits only to jobs already assigned to them, and moves none to another
    // job: any other job looks missing, as when they read it. Otherwise a visit would hand them
    // any job of the account.
    onSeenJob: 'job',
  },
  rules: { authorize, check },
  actions: { checkIn, checkOut, onMyWay },
  actionDocs: { ...visitActionDocs, onMyWay: onMyWayDoc },
});
