import { ApiError } from '../../errors.js';
import { defineCollection, type ItemContext } from '../machinery/collection.js';
import { byTheirJob } from '../policy.js';
import { noteFields } from './schema.js';

/** A Contractor changes only their own notes (they read every note of their jobs). */
function authorize({ caller, op, existing }: ItemContext<'notes'>): void {
  if (caller.role !== 'contractor' || op === 'create') return;
  if (existing && existing.author_id !== caller.userId)
    throw new ApiError('roleForbids', 'contractors change only their own notes');
}

export const notes = defineCollection({
  name: 'notes',
  table: 'notes',
  description: 'What crews and office staff write on a job. The author is the caller.',
  fields: noteFields,
  search: ['body'],
  counted: true,
  example: (ref) => ({ job: ref('jobs'), body: 'Customer asks us to call before arriving.' }),
  policy: {
    read: { administrator: 'all', employee: 'all', contractor: 'own' },
    write: { administrator: 'all', employee: 'all', contractor: 'own' },
    own: byTheirJob,
    ownReads: ['visits'],
    // Which job is theirs is checked in the transaction (onSeenJob).
    ownsNew: () => true,
    onSeenJob: 'job',
  },
  rules: {
    authorize,
    async fill({ caller, op, row }) {
      if (op === 'create') row.author_id = caller.userId || null;
    },
  },
});
