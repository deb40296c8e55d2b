import { Type } from '@sinclair/typebox';
import { AssocRef, f, standardFields, type AssocListField, type Field } from '../machinery/fields.js';
import { untyped } from '../machinery/read.js';

/** The members: rows of workgroup_members (the table users' `workgroups` reads too). */
const members: AssocListField = {
  kind: 'assocList',
  table: 'users',
  description: 'The members; writing the list replaces the membership.',
  schema: Type.Array(AssocRef, { maxItems: 1000 }),
  memberSchema: { firstName: Type.String(), lastName: Type.String() },
  async load(db, accountId, groupIds, expand) {
    const rows = await untyped(db)
      .selectFrom('workgroup_members as m')
      .innerJoin('users as u', 'u.id', 'm.user_id')
      .select(['m.workgroup_id', 'u.id', 'u.first_name', 'u.last_name'])
      .where('m.account_id', '=', accountId)
      .where('m.workgroup_id', 'in', groupIds)
      .orderBy('u.id')
      .execute();
    const out = new Map<number, Record<string, unknown>[]>();
    for (const r of rows) {
      if (!out.has(r.workgroup_id)) out.set(r.workgroup_id, []);
      out.get(r.workgroup_id)!.push(expand ? { id: r.id, firstName: r.first_name, lastName: r.last_name } : { id: r.id });
    }
    return out;
  },
  async save(db, accountId, groupId, ids) {
    await untyped(db).deleteFrom('workgroup_members').where('account_id', '=', accountId).where('workgroup_id', '=', groupId).execute();
    if (ids.length) {
      await untyped(db)
        .insertInto('workgroup_members')
        .values([...new Set(ids)].map((id) => ({ account_id: accountId, workgroup_id: groupId, user_id: id })))
        .execute();
    }
  },
};

export const workgroupFields: Record<string, Field> = {
  name: f.string('name', { required: true, minLength: 1, maxLength: 100, unique: 'account' }),
  users: members,
  ...standardFields(),
};
