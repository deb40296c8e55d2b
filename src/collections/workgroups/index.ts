import { defineCollection } from '../machinery/collection.js';
import { workgroupFields } from './schema.js';

export const workgroups = defineCollection({
  name: 'workgroups',
  table: 'workgroups',
  description: 'Named groups of users (teams, crews); a user lists theirs under `workgroups`.',
  fields: workgroupFields,
  counted: true,
  example: (ref) => ({ name: 'Plumbers', users: [ref('users')] }),
  policy: {
    read: { administrator: 'all', employee: 'all', contractor: 'none' },
    write: { administrator: 'all', employee: 'none', contractor: 'none' },
  },
});
