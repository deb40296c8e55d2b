import { Type } from '@sinclair/typebox';
import { f, standardFields, type Field } from '../machinery/fields.js';
import { linkList } from '../machinery/links.js';

export const PHONE = '^\\+[0-9]{7,15}$';
export const COLOUR = '^#[0-9A-Fa-f]{6}$';
const EMAIL = "^[^\\s@]+@[^\\s@]+\\.[^\\s@]+$";

/** A user's workgroups: membership rows, shown as [{id}] or, with [*], [{id, name}]. */
const workgroups = linkList({
  through: 'workgroup_members',
  own: 'user_id',
  other: 'workgroup_id',
  table: 'workgroups',
  members: { name: { column: 'name', type: 'string' } },
  extended: true,
});

export const userFields: Record<string, Field> = {
  firstName: f.string('first_name', { required: true, minLength: 1, maxLength: 100 }),
  lastName: f.string('last_name', { required: true, minLength: 1, maxLength: 100 }),
  companyName: f.string('company_name', { nullable: true, maxLength: 200 }),
  email: f.string('email', { nullable: true, maxLength: 254, pattern: EMAIL, format: 'email' }),
  phone: f.string('phone', { nullable: true, pattern: PHONE }),
  mobile: f.string('mobile', { required: true, pattern: PHONE }),
  hourlyRate: f.number('hourly_rate', { minimum: 0, default: 0 }),
  active: f.flag('active', { readOnly: true, default: 1 }),
  colour: f.string('colour', { nullable: true, pattern: COLOUR, default: '#000000' }),
  isAssignable: f.boolean('is_assignable', { default: false }),
  role: f.assoc('role_id', 'roles', { members: { name: { column: 'name', type: 'string' } } }),
  status: f.object({
    message: f.string('status_message', { maxLength: 1000 }),
    timestamp: f.datetime('status_timestamp'),
  }),
  ...standardFields({ accountRequired: true }),
  login: f.string('login', { extended: true, nullable: true, minLength: 3, maxLength: 100, pattern: '^[^\\s]+$', unique: 'global' }),
  workgroups,
  newPassword: f.writeOnly(Type.String({ minLength: 10, maxLength: 1000 })),
  newPasswordConfirm: f.writeOnly(Type.String({ maxLength: 1000 })),
};
// The spec's default field set has no created/modified for users: they come with fields=*.
for (const k of ['created', 'modified']) userFields[k] = { ...userFields[k], extended: true };
