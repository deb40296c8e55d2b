import { f, kinds, standardFields, type Field } from '../machinery/fields.js';

export const siteFields: Record<string, Field> = {
  client: f.assoc('client_id', 'clients', {
    required: true,
    referenceFilter: { deleted: 0 },
    onDelete: 'cascade',
    members: ['name'],
  }),
  name: f.string('name', { required: true, minLength: 1, maxLength: 200, contains: true }),
  address: kinds.address(),
  distance: kinds.distance(),
  notes: f.text('notes', { nullable: true }),
  ...standardFields(),
};
