import { f, kinds, standardFields, type Field } from '../machinery/fields.js';

export const contactFields: Record<string, Field> = {
  client: f.assoc('client_id', 'clients', {
    required: true,
    referenceFilter: { deleted: 0 },
    onDelete: 'cascade',
    members: ['name'],
  }),
  firstName: f.string('first_name', { required: true, minLength: 1, maxLength: 100 }),
  lastName: f.string('last_name', { nullable: true, maxLength: 100 }),
  title: f.string('title', { nullable: true, maxLength: 100 }),
  email: kinds.email('email', { nullable: true }),
  phone: kinds.phone('phone', { nullable: true }),
  mobile: kinds.phone('mobile', { nullable: true }),
  isPrimary: f.boolean('is_primary', {
    default: false,
    description: "At most one per client: setting it clears the client's other primary contact.",
  }),
  ...standardFields(),
};
