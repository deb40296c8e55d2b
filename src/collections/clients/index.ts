import { defineCollection } from '../machinery/collection.js';
import { clientFields } from './schema.js';

export const clients = defineCollection({
  name: 'clients',
  table: 'clients',
  description: 'The customers work is done for.',
  fields: clientFields,
  customFields: true,
  search: ['name', 'companyName', 'email', 'notes', 'address'],
  counted: true,
  example: () => ({
    name: 'Jane Doe',
    email: 'jane@example.com',
    mobile: '+447700900001',
    address: { line1: '1 Park Row', city: 'Leeds' },
  }),
  policy: {
    read: { administrator: 'all', employee: 'all', contractor: 'none' },
    write: { administrator: 'all', employee: 'all', contractor: 'none' },
  },
});
