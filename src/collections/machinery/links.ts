import { Type } from '@sinclair/typebox';
import { AssocRef, type AssocListField, type ValueType } from './fields.js';
import { untyped } from './read.js';

interface LinkOptions {
  /** The link table, with account_id and the two id columns. */
  through: string;
  /** Column holding the id of the item that owns the list. */
  own: string;
  /** Column holding the ids listed. */
  other: string;
  /** Table of the listed items. */
  table: string;
  /** Members shown with [*]: API name -> column of `table`. */
  members: Record<string, { column: string; type: ValueType }>;
  description?: string;
  extended?: boolean;
}

/**
 * A many-to-many association through a link table (a workgroup's `users`, a user's `workgroups`).
 * Both sides are read and written inside the caller's account only.
 */
export function linkList(o: LinkOptions): AssocListField {
  return {
    kind: 'assocList',
    table: o.table,
    description: o.description,
    extended: o.extended,
    schema: Type.Array(AssocRef, { maxItems: 1000 }),
    memberSchema: Object.fromEntries(Object.keys(o.members).map((m) => [m, o.members[m].type === 'string' ? Type.String() : Type.Number()])),
    async load(db, accountId, ownIds, expand) {
      const names = Object.keys(o.members);
      const rows = await untyped(db)
        .selectFrom(`${o.through} as l`)
        .innerJoin(`${o.table} as t`, 't.id', `l.${o.other}`)
        .select([`l.${o.own} as own`, 't.id', ...names.map((m) => `t.${o.members[m].column} as ${m}`)])
        .where('l.account_id', '=', accountId)
        .where('t.account_id', '=', accountId)
        .where(`l.${o.own}`, 'in', ownIds)
        .orderBy('t.id')
        .execute();
      const out = new Map<number, Record<string, unknown>[]>();
      for (const r of rows) {
        if (!out.has(r.own)) out.set(r.own, []);
        out.get(r.own)!.push(expand ? Object.fromEntries([['id', r.id], ...names.map((m) => [m, r[m]])]) : { id: r.id });
      }
      return out;
    },
    async save(db, accountId, ownId, ids) {
      await untyped(db).deleteFrom(o.through).where('account_id', '=', accountId).where(o.own, '=', ownId).execute();
      if (ids.length) {
        await untyped(db)
          .insertInto(o.through)
          .values([...new Set(ids)].map((id) => ({ account_id: accountId, [o.own]: ownId, [o.other]: id })))
          .execute();
      }
    },
  };
}
