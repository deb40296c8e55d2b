import { ApiError } from '../../errors.js';
import { defineCollection } from '../machinery/collection.js';
import { seesJob } from '../policy.js';
import { defaultStatus, nextReference } from './repository.js';
import { jobFields } from './schema.js';

export const jobs = defineCollection({
  name: 'jobs',
  table: 'jobs',
  description: 'Work to be done, usually for a client; scheduled through visits.',
  fields: jobFields,
  customFields: true,
  search: ['title', 'reference', 'description', 'orderNumber', 'address'],
  counted: true,
  example: (ref) => ({
    title: 'Boiler service',
    client: ref('clients'),
    status: ref('statuses'),
    priority: 'high',
    dueDate: '2030-05-01',
  }),
  policy: {
    read: { administrator: 'all', employee: 'all', contractor: 'own' },
    write: { administrator: 'all', employee: 'all', contractor: 'own' },
    // A job is a contractor's when one of its visits is assigned to them. No `ownsNew`: they cannot create jobs.
    own: (caller, eb, table) => seesJob(caller, eb, `${table}.id`),
  },
  rules: {
    // Deleting a job deletes every visit on it, other people's too: not a contractor's call.
    authorize({ caller, op }) {
      if (op === 'delete' && caller.role === 'contractor')
        throw new ApiError('roleForbids', 'contractors cannot delete jobs');
    },
    async fill({ caller, db, op, row, once }) {
      if (op !== 'create') return;
      row.created_by = caller.userId;
      if (row.status_id === undefined) {
        row.status_id = await once('defaultStatus', () => defaultStatus(db, caller.accountId));
      }
      if (row.reference === undefined) row.reference = await nextReference(db, caller.accountId);
    },
  },
});
