import { Type } from '@sinclair/typebox';
import { f, standardFields, type Field } from '../machinery/fields.js';
import { CUSTOM_COLLECTIONS, CUSTOM_KEY, CUSTOM_TYPES } from '../machinery/custom.js';

export const definitionFields: Record<string, Field> = {
  collection: f.enum('collection', CUSTOM_COLLECTIONS, {
    required: true,
    description: 'The collection whose items have the field; fixed once created.',
  }),
  key: f.string('key', {
    required: true,
    pattern: CUSTOM_KEY,
    maxLength: 40,
    uniqueIndex: true,
    description:
      'The name under `customFields`: a lower-case letter, then up to 39 letters and digits; unique per collection in the account, fixed once created.',
  }),
  label: f.string('label', { required: true, minLength: 1, maxLength: 200 }),
  type: f.enum('type', CUSTOM_TYPES, { required: true, description: 'Fixed once created.' }),
  options: f.json(
    'options',
    Type.Array(Type.String({ minLength: 1, maxLength: 100 }), { minItems: 1, maxItems: 100, uniqueItems: true }),
    {
      nullable: true,
      description: 'The values a `select` takes (1–100 distinct strings); required there, and for `select` only.',
    },
  ),
  required: f.boolean('is_required', {
    default: false,
    description: 'Writes made from now on must give a value (existing items are not checked).',
  }),
  unique: f.boolean('is_unique', {
    default: false,
    description:
      'No two items of the collection share a value (logically deleted ones included): an integrator’s own ids.',
  }),
  clientId: f.string('client_id', {
    readOnly: true,
    nullable: true,
    description: 'The OAuth client whose token created the definition, or null.',
  }),
  ...standardFields(),
};
