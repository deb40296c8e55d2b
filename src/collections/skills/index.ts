import { defineCollection } from '../machinery/collection.js';
import { f, standardFields, type Field } from '../machinery/fields.js';

export const skillFields: Record<string, Field> = {
  name: f.string('name', { required: true, minLength: 1, maxLength: 200, unique: 'account' }),
  ...standardFields(),
};

/** What a job may require of who does it (PRODUCT §15): Administrators write, every role reads. */
export const skills = defineCollection({
  name: 'skills',
  table: 'skills',
  description:
    "The account's skills (Gas Safe, electrical, working at height…): users hold them, jobs require them, plans and slots match them. Administrators write; every role reads.",
  fields: skillFields,
  counted: true,
  example: () => ({ name: 'Gas Safe' }),
  policy: {
    read: { administrator: 'all', employee: 'all', contractor: 'all' },
    write: { administrator: 'all', employee: 'none', contractor: 'none' },
  },
});
