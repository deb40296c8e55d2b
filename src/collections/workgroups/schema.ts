import { f, standardFields, type Field } from '../machinery/fields.js';
import { linkList } from '../machinery/links.js';

/** The members: rows of workgroup_members (the table users' `workgroups` reads too). */
const members = linkList({
  through: 'workgroup_members',
  own: 'workgroup_id',
  other: 'user_id',
  target: 'users',
  members: ['firstName', 'lastName'],
  description: 'The members; writing the list replaces the membership.',
});

export const workgroupFields: Record<string, Field> = {
  name: f.string('name', { required: true, minLength: 1, maxLength: 100, unique: 'account' }),
  users: members,
  ...standardFields(),
};
