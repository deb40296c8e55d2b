import { Type } from '@sinclair/typebox';
import { execute, query, slot, untyped, type Executor } from '../../db/runner.js';
import { readSharedList } from '../../db/batched.js';
import { AssocRef, type AssocListField } from './fields.js';
import { toApi } from './kinds/index.js';

interface LinkOptions {
  /** The link table, with account_id and the two id columns. */
  through: string;
  /** Column holding the id of the item that owns the list. */
  own: string;
  /** Column holding the ids listed. */
  other: string;
  /** The listed items' collection. */
  target: string;
  /** Its fields shown with [*]. */
  members: readonly string[];
  description?: string;
  extended?: boolean;
  /** The listed items do not present the list (a job's required skills): see AssocListField.oneWay. */
  oneWay?: boolean;
}

/**
 * A many-to-many association through a link table (a workgroup's `users`, a user's `workgroups`).
 * Both sides are read and written inside the caller's account only.
 */
export function linkList(o: LinkOptions): AssocListField {
  return {
    kind: 'assocList',
    target: o.target,
    memberNames: o.members,
    table: '',
    members: {},
    through: o.through,
    own: o.own,
    other: o.other,
    description: o.description,
    extended: o.extended,
    oneWay: o.oneWay,
    schema: Type.Array(AssocRef, { maxItems: 1000 }),
  };
}

type ListRow = { own: number; id: number } & Record<string, unknown>;

/**
 * The statement reading the lists of `own` items (its plan is checked in links.test.ts). Ordered
 * by the link table's key (account, own, other), so the plan starts from the owners' links, not
 * from every listed item of the account, whatever the statistics say.
 */
export function listStatement(db: Executor, field: AssocListField, account: number, own: readonly number[]) {
  const names = Object.keys(field.members);
  return untyped(db)
    .selectFrom(`${field.through} as l`)
    .innerJoin(`${field.table} as t`, 't.id', `l.${field.other}`)
    .select([`l.${field.own} as own`, 't.id', ...names.map((m) => `t.${field.members[m].column} as ${m}`)])
    .where('l.account_id', '=', account)
    .where('t.account_id', '=', account)
    .where(`l.${field.own}`, 'in', own)
    .orderBy(`l.${field.own}`)
    .orderBy(`l.${field.other}`)
    .$castTo<ListRow>();
}

/** Loads [{id, ...members}] lists for many items at once. */
export async function loadLists(
  db: Executor,
  field: AssocListField,
  accountId: number,
  ownIds: number[],
  expand: boolean,
) {
  const names = Object.keys(field.members);
  // Built once per shape and run with new ids, as byIds in read.ts does (building it on each read
  // was 12 % of W3's CPU). One item's lists (GET /jobs/ID) are read with those other requests of
  // the moment ask (src/db/batched.ts): on PostgreSQL one round trip shared instead of one each.
  const key = `loadLists|${field.through}|${field.table}|${field.own}|${field.other}|${names.join(',')}`;
  const rows =
    ownIds.length === 1
      ? await readSharedList<ListRow>(
          db,
          {
            key,
            values: { account: accountId },
            build: (ids) => listStatement(db, field, slot('account'), ids),
            idOf: (r) => Number(r.own),
          },
          ownIds[0],
        )
      : ownIds.length <= 10
        ? await query<ListRow>(
            db,
            `${key}|${ownIds.length}`,
            () =>
              listStatement(
                db,
                field,
                slot('account'),
                ownIds.map((_, i) => slot<number>(`${i}`)),
              ),
            { account: accountId, ...ownIds },
          )
        : await execute<ListRow>(db, listStatement(db, field, accountId, ownIds));
  const out = new Map<number, Record<string, unknown>[]>();
  for (const r of rows) {
    if (!out.has(r.own)) out.set(r.own, []);
    out
      .get(r.own)!
      .push(
        expand
          ? Object.fromEntries([['id', r.id], ...names.map((m) => [m, toApi(field.members[m], r[m])])])
          : { id: r.id },
      );
  }
  return out;
}

/** What setting the list of one item to `ids` changes: the listed ids it adds and those it removes. */
export async function listChanges(
  db: Executor,
  field: AssocListField,
  accountId: number,
  ownId: number,
  ids: number[],
): Promise<{ added: number[]; removed: number[] }> {
  const rows = await untyped(db)
    .selectFrom(field.through)
    .select(`${field.other} as id`)
    .where('account_id', '=', accountId)
    .where(field.own, '=', ownId)
    .execute();
  const have = new Set(rows.map((r) => r.id as number));
  const want = new Set(ids);
  return { added: [...want].filter((id) => !have.has(id)), removed: [...have].filter((id) => !want.has(id)) };
}

/**
 * Applies what listChanges found; ids were already checked to exist in the account. Only the links
 * that change are written, so the items at the other end whose list stays as it was keep their row
 * version (the link table's triggers bump both ends).
 */
export async function saveList(
  db: Executor,
  field: AssocListField,
  accountId: number,
  ownId: number,
  change: { added: number[]; removed: number[] },
) {
  if (change.removed.length) {
    await untyped(db)
      .deleteFrom(field.through)
      .where('account_id', '=', accountId)
      .where(field.own, '=', ownId)
      .where(field.other, 'in', change.removed)
      .execute();
  }
  if (change.added.length) {
    await untyped(db)
      .insertInto(field.through)
      .values(change.added.map((id) => ({ account_id: accountId, [field.own]: ownId, [field.other]: id })))
      .execute();
  }
}

/** The owners whose list names any of `ids` (the workgroups a deleted user was a member of). */
export async function ownersListing(
  db: Executor,
  field: AssocListField,
  accountId: number,
  ids: number[],
): Promise<number[]> {
  const rows = await untyped(db)
    .selectFrom(field.through)
    .select(`${field.own} as own`)
    .distinct()
    .where('account_id', '=', accountId)
    .where(field.other, 'in', ids)
    .execute();
  return rows.map((r) => r.own as number);
}
