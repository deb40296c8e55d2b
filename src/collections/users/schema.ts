import { Type } from '@sinclair/typebox';
import { f, kinds, standardFields, type Field } from '../machinery/fields.js';
import { linkList } from '../machinery/links.js';
import { workingHoursField } from '../machinery/working-hours.js';

/** A user's workgroups: membership rows, shown as [{id}] or, with [*], [{id, name}]. */
const workgroups = linkList({
  through: 'workgroup_members',
  own: 'user_id',
  other: 'workgroup_id',
  target: 'workgroups',
  members: ['name'],
  extended: true,
});

/** A user's skills (PRODUCT §15): the list is the user's own data (skills do not show their users). */
const skills = linkList({
  through: 'user_skills',
  own: 'user_id',
  other: 'skill_id',
  target: 'skills',
  members: ['name'],
  oneWay: true,
  description: 'The skills the user holds: plans and slots give a job only to users with every skill it requires.',
});

export const userFields: Record<string, Field> = {
  firstName: f.string('first_name', { required: true, minLength: 1, maxLength: 100 }),
  lastName: f.string('last_name', { required: true, minLength: 1, maxLength: 100 }),
  companyName: f.string('company_name', { nullable: true, maxLength: 200 }),
  email: kinds.email('email', { nullable: true }),
  phone: kinds.phone('phone', { nullable: true }),
  mobile: kinds.phone('mobile', { required: true }),
  hourlyRate: f.number('hourly_rate', { minimum: 0, default: 0 }),
  active: f.flag('active', { readOnly: true, default: 1 }),
  colour: kinds.colour('colour', { nullable: true, default: '#000000' }),
  isAssignable: f.boolean('is_assignable', { default: false }),
  role: f.assoc('role_id', 'roles', { members: ['name'] }),
  status: f.object({
    message: f.string('status_message', { maxLength: 1000 }),
    timestamp: f.datetime('status_timestamp'),
  }),
  workingHours: workingHoursField('working_hours', {
    description:
      "At most 14 `{day, start, end}` in the account's time zone (`mon`…`sun`, `HH:MM`), start before end, one day's intervals not overlapping. Default `[]`: never planned or offered in slots.",
  }),
  homeLocation: kinds.point('home_location', {
    description: "Where the user's day starts and ends (`{lat, lng}`), or null: the day starts at the first visit.",
  }),
  skills,
  ...standardFields({ accountRequired: true }),
  login: f.string('login', {
    extended: true,
    nullable: true,
    minLength: 3,
    maxLength: 100,
    pattern: '^[^\\s]+$',
    unique: { table: 'logins', id: 'user_id' },
  }),
  workgroups,
  newPassword: f.writeOnly(Type.String({ minLength: 10, maxLength: 1000 })),
  newPasswordConfirm: f.writeOnly(Type.String({ maxLength: 1000 })),
};
// The spec's default field set has no created/modified for users: they come with fields=*.
for (const k of ['created', 'modified']) userFields[k] = { ...userFields[k], extended: true };
