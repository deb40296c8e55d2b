import { f, kinds, standardFields, type Field } from '../machinery/fields.js';

export const STATUS_GROUPS = ['new', 'inProgress', 'onHold', 'completed'] as const;

export const statusFields: Record<string, Field> = {
  label: f.string('label', { required: true, minLength: 1, maxLength: 100, unique: 'account' }),
  colour: kinds.colour('colour', { nullable: true }),
  group: f.enum('status_group', STATUS_GROUPS, { default: 'new' }),
  isDefault: f.boolean('is_default', {
    default: false,
    description: 'Exactly one per account: the status new jobs get.',
  }),
  ...standardFields(),
};
