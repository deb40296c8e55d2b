import { f, kinds, standardFields, type Field } from '../machinery/fields.js';

export const clientFields: Record<string, Field> = {
  name: f.string('name', { required: true, minLength: 1, maxLength: 200, contains: true }),
  companyName: f.string('company_name', { nullable: true, maxLength: 200 }),
  email: kinds.email('email', { nullable: true }),
  phone: kinds.phone('phone', { nullable: true }),
  mobile: kinds.phone('mobile', { nullable: true }),
  address: kinds.address(),
  distance: kinds.distance(),
  notes: f.text('notes', { nullable: true }),
  emailOptOut: f.boolean('email_opt_out', {
    default: false,
    description:
      'The client asked for no e-mail: messages to it, its address or its contacts are `failed` (`opted out`).',
  }),
  ...standardFields(),
};
