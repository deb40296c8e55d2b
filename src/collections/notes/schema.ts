import { f, standardFields, type Field } from '../machinery/fields.js';

export const noteFields: Record<string, Field> = {
  job: f.assoc('job_id', 'jobs', {
    required: true,
    referenceFilter: { deleted: 0 },
    onDelete: 'cascade',
    members: ['title', 'reference'],
  }),
  body: f.text('body', { required: true, minLength: 1, description: '1 to 10,000 characters.' }),
  author: f.assoc('author_id', 'users', {
    readOnly: true,
    nullable: true,
    description: 'Who wrote the note (null once that user was deleted).',
    members: ['firstName', 'lastName'],
  }),
  ...standardFields(),
};
