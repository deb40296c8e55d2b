import { f, standardFields, type Field } from '../machinery/fields.js';
import { PointSchema } from '../machinery/geo.js';

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
  eta: f.time('eta', {
    nullable: true,
    description:
      "Set by POST /visits/:id/onMyWay: now plus the travel from the user's latest location of the last 30 minutes to the job; null without one.",
  }),
  checkInTime: f.time('check_in_time', {
    nullable: true,
    description: 'Set by POST /visits/:id/checkIn (the server clock).',
  }),
  checkOutTime: f.time('check_out_time', {
    nullable: true,
    description: 'Set by POST /visits/:id/checkOut (the server clock).',
  }),
  checkInLocation: f.json('check_in_location', PointSchema, {
    nullable: true,
    readOnly: true,
    description: 'Where the check-in was made `{lat, lng, accuracy}`, or null.',
  }),
  checkOutLocation: f.json('check_out_location', PointSchema, {
    nullable: true,
    readOnly: true,
    description: 'Where the check-out was made `{lat, lng, accuracy}`, or null.',
  }),
  arrivalWindowStart: f.instant('arrival_window_start', {
    nullable: true,
    description: 'The arrival promised to the customer: from (with arrivalWindowEnd, or neither).',
  }),
  arrivalWindowEnd: f.instant('arrival_window_end', {
    nullable: true,
    description: 'The arrival promised to the customer: until, after arrivalWindowStart.',
  }),
  locked: f.boolean('locked', { default: false, description: 'A plan never moves a locked visit.' }),
  ...standardFields(),
};
