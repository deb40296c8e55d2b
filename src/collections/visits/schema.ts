import { f, standardFields, type Field } from '../machinery/fields.js';

export const VISIT_STATES = ['scheduled', 'travelling', 'onSite', 'completed', 'cancelled'] as const;

const live = { deleted: 0 };

export const visitFields: Record<string, Field> = {
  job: f.assoc('job_id', 'jobs', {
    required: true,
    referenceFilter: live,
    onDelete: 'cascade',
    members: ['title', 'reference'],
  }),
  user: f.assoc('user_id', 'users', {
    nullable: true,
    referenceFilter: live,
    members: ['firstName', 'lastName'],
    description: 'The assignee, or null.',
  }),
  label: f.string('label', { required: true, minLength: 1, maxLength: 200 }),
  notes: f.text('notes', { nullable: true }),
  startTime: f.instant('start_time', { required: true }),
  endTime: f.instant('end_time', { required: true, description: 'After startTime.' }),
  state: f.enum('state', VISIT_STATES, { default: 'scheduled' }),
  ...standardFields(),
};
