import { Type } from '@sinclair/typebox';
import { f, standardFields, type Field } from '../machinery/fields.js';
import {
  FIELD_TYPES,
  KEY_PATTERN,
  LABEL_MAX,
  MAX_FIELDS,
  MAX_OPTIONS,
  OPTION_MAX,
  checkTemplateFields,
} from '../../domain/forms/template.js';

/** One field of a template, as OpenAPI shows it (checkTemplateFields holds the exact rules). */
const FormFieldSchema = Type.Object(
  {
    key: Type.String({ pattern: KEY_PATTERN, description: 'Unique in the template.' }),
    label: Type.String({ minLength: 1, maxLength: LABEL_MAX }),
    type: Type.Union(FIELD_TYPES.map((t) => Type.Literal(t))),
    required: Type.Optional(Type.Boolean({ default: false })),
    options: Type.Optional(
      Type.Array(Type.String({ minLength: 1, maxLength: OPTION_MAX }), {
        minItems: 1,
        maxItems: MAX_OPTIONS,
        uniqueItems: true,
        description: 'The choices of a select or multiSelect field (required there, refused elsewhere).',
      }),
    ),
  },
  { additionalProperties: false },
);

export const formTemplateFields: Record<string, Field> = {
  name: f.string('name', { required: true, minLength: 1, maxLength: 200 }),
  fields: f.json('fields', Type.Array(FormFieldSchema, { minItems: 1, maxItems: MAX_FIELDS }), {
    required: true,
    description: `1 to ${MAX_FIELDS} fields; failures name \`fields[i].member\`. Read back with \`required\` explicit.`,
    check: (v, name) => checkTemplateFields(v, name).errors,
  }),
  requiredToComplete: f.boolean('required_to_complete', {
    default: false,
    description: 'A job listing this template is not completed before it has a submission of it.',
  }),
  version: f.integer('template_version', {
    readOnly: true,
    minimum: 1,
    description: '1, plus one whenever a write changes the value of `fields`; submissions record it.',
  }),
  ...standardFields(),
};
