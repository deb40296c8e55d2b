import { f, standardFields, type Field } from '../machinery/fields.js';

export const TIMESHEET_KINDS = ['work', 'travel', 'break'] as const;

const live = { deleted: 0 };

export const timesheetFields: Record<string, Field> = {
  user: f.assoc('user_id', 'users', {
    referenceFilter: live,
    onDelete: 'cascade',
    members: ['firstName', 'lastName'],
    description: 'Whose time; default the caller. Employees and Contractors write only their own.',
  }),
  job: f.assoc('job_id', 'jobs', {
    nullable: true,
    referenceFilter: live,
    members: ['title', 'reference'],
    description: 'The job, or null; a visit sent without it gives its job.',
  }),
  visit: f.assoc('visit_id', 'visits', {
    nullable: true,
    referenceFilter: live,
    members: ['label'],
    description: "The visit, or null; of the entry's job.",
  }),
  kind: f.enum('kind', TIMESHEET_KINDS, { default: 'work' }),
  startTime: f.instant('start_time', {
    required: true,
    description: "One user's entries never overlap (an entry may start when another ends).",
  }),
  endTime: f.instant('end_time', { nullable: true, description: 'After startTime; null while running.' }),
  notes: f.text('notes', { nullable: true }),
  duration: f.integer('duration', {
    nullable: true,
    readOnly: true,
    minimum: 0,
    description: 'Whole seconds from startTime to endTime, rounded down; null while running.',
  }),
  ...standardFields(),
};
