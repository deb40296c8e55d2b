import { validationError, type ApiErrorBody } from '../../errors.js';
import { byTheirUser } from '../policy.js';
import { defineCollection, type TxItemContext } from '../machinery/collection.js';
import { f, standardFields, type Field } from '../machinery/fields.js';

export const UNAVAILABILITY_REASONS = ['leave', 'sick', 'training', 'other'] as const;

export const unavailabilityFields: Record<string, Field> = {
  user: f.assoc('user_id', 'users', {
    required: true,
    referenceFilter: { deleted: 0 },
    onDelete: 'cascade',
    members: ['firstName', 'lastName'],
    description: 'Who is away.',
  }),
  startTime: f.instant('start_time', { required: true }),
  endTime: f.instant('end_time', { required: true, description: 'After startTime.' }),
  reason: f.enum('reason', UNAVAILABILITY_REASONS, { default: 'other' }),
  notes: f.text('notes', { nullable: true }),
  ...standardFields(),
};

/** End after start, the stored other end when only one changes. */
async function check({ op, item, existing }: TxItemContext<'unavailabilities'>): Promise<ApiErrorBody[]> {
  if (op === 'delete') return [];
  const start = item.startTime !== undefined ? Date.parse(item.startTime as string) : Number(existing?.start_time);
  const end = item.endTime !== undefined ? Date.parse(item.endTime as string) : Number(existing?.end_time);
  return end > start
    ? []
    : [
        validationError(
          'invalid',
          item.endTime !== undefined ? 'endTime' : 'startTime',
          'endTime must be after startTime',
        ),
      ];
}

/** Leave, sickness, training (PRODUCT §11): Administrators write; Employees read all, Contractors their own. */
export const unavailabilities = defineCollection({
  name: 'unavailabilities',
  table: 'unavailabilities',
  description: 'When a user is away (leave, sickness, training): Administrators write, Contractors read their own.',
  fields: unavailabilityFields,
  counted: true,
  textField: 'notes',
  example: (ref) => ({
    user: ref('users'),
    startTime: '2030-02-01T00:00:00Z',
    endTime: '2030-02-08T00:00:00Z',
    reason: 'leave',
    notes: 'Half term',
  }),
  policy: {
    read: { administrator: 'all', employee: 'all', contractor: 'own' },
    write: { administrator: 'all', employee: 'none', contractor: 'none' },
    own: byTheirUser,
    ownReads: [],
  },
  rules: { check },
});
