import { defineCollection } from '../machinery/collection.js';
import { clientFields } from './schema.js';

export const clients = defineCollection({
  name: 'clients',
  table: 'clients',
  description: 'The customers work is done for.',
  fields: clientFields,
  counted: true,
  policy: {
    read: { administrator: 'all', employee: 'all', contractor: 'none' },
    write: { administrator: 'all', employee: 'all', contractor: 'none' },
  },
});
