import { sql, type Expression, type SqlBool } from 'kysely';
import { CONTAINS_MIN, lowerText } from '../../db/text.js';
import { dialectOf, untyped, type Executor } from '../../db/runner.js';
import { ApiError } from '../../errors.js';
import { gateThrough } from './access.js';
import { type Caller, type Collection, type EB, type FilterColumn } from './collection.js';
import { INT32_MAX, REFERENCE_TABLES, type AssocField, type AssocListField } from './fields.js';
import { KINDS } from './kinds/index.js';
import { fieldsIn, type Value, type WhereNode } from './where.js';

const bad = (why: string) => new ApiError('badModifier', `where: ${why}`);

/**
 * One level of association members in `where` and `sort` (PRODUCT §10): `client.name` is the
 * default field `name` of the job's client, as `clients` declares it.
 */
export interface AssocPath {
  field: AssocField;
  col: FilterColumn;
}

/** The association member a name such as `client.name` denotes, or undefined when it is none. */
export function assocPath(c: Collection, name: string): AssocPath | undefined {
  const [root, member, ...rest] = name.split('.');
  if (member === undefined || rest.length) return undefined;
  const field = c.fields[root];
  if (field?.kind !== 'assoc') return undefined;
  const target = field.targetCollection;
  if (target) {
    const col = target.defaultFields.includes(member) ? target.columns.get(member) : undefined;
    return col ? { field, col } : undefined;
  }
  const decl = REFERENCE_TABLES[field.target]?.fields[member];
  if (decl?.kind !== 'scalar' || !KINDS[decl.type].compare) return undefined;
  return { field, col: { column: decl.column, type: decl.type, nullable: !!decl.nullable } };
}

/** The alias of the associated row in the subqueries below (a name no table has). */
const ASSOC = 'fsm_assoc';

/**
 * The associated row of the outer item, as a subquery over the target: in the caller's account
 * (the tenancy is the join's), within what the caller may read of the target (its permission and
 * its role scope: 403 otherwise).
 */
function associated(c: Collection, path: AssocPath, caller: Caller | undefined, eb: EB) {
  return matching(path, caller, eb).where(`${ASSOC}.id`, '=', eb.ref(`${c.table}.${path.field.column}`));
}

/** The target's rows the caller may read through the association, in its account (no outer item). */
function matching(path: AssocPath, caller: Caller | undefined, eb: EB) {
  const { field } = path;
  const target = field.targetCollection;
  if (!caller) throw bad(`unknown field '${field.target}'`);
  const access = target ? gateThrough(target, caller) : 'all';
  return eb
    .selectFrom(`${field.table} as ${ASSOC}`)
    .where((inner) =>
      inner.and([
        inner(`${ASSOC}.${field.accountColumn}`, '=', caller.accountId),
        ...(access === 'own' && target?.policy.own ? [target.policy.own(caller, inner, ASSOC)] : []),
      ]),
    );
}

/** An association member as a sort key: the associated row's value (null without one). */
export function assocSortKey(c: Collection, path: AssocPath, caller: Caller | undefined, eb: EB) {
  return associated(c, path, caller, eb).select(`${ASSOC}.${path.col.column}`);
}

/** What a `where` is read with beside its collection, from the caller's account. */
export interface WhereAccount {
  /** The `customFields.<key>` columns it names (custom.ts, customColumns). */
  custom?: Map<string, FilterColumn>;
  /** The decimals of the account's currency, when it compares a money member (moneyIn). */
  exponent?: number;
  /**
   * Whether the terms `steers` names take their indexed form (the default): `~` through the
   * member's trigram index, an association member as one `in` subquery over the target. Else
   * the scanning form, an item at a time (the `like` alone, `exists` per item), which reads the
   * fewest rows for a page of a term most items match (read.ts decides by the count).
   */
  indexed?: boolean;
}

/**
 * Whether a `where` has a term with both forms (WhereAccount.indexed): an association member, or
 * `~` on a member declared `contains` with a term the trigram index can answer.
 */
export function steers(c: Collection, node: WhereNode | undefined): boolean {
  if (!node) return false;
  if (node.type !== 'cmp') return steers(c, node.left) || steers(c, node.right);
  const col = c.columns.get(node.field);
  if (!col) return !!assocPath(c, node.field);
  return (
    !!col.contains &&
    node.op === '~' &&
    typeof node.value === 'string' &&
    [...lowerText(node.value)].length >= CONTAINS_MIN
  );
}

/** The filter column a `where` field names (an association member's: its target's column). */
const columnOf = (c: Collection, field: string): FilterColumn | undefined =>
  c.columns.get(field) ?? assocPath(c, field)?.col;

/** Whether a `where` compares a money member (its values then carry the currency's decimals). */
export const moneyIn = (c: Collection, node: WhereNode | undefined): boolean =>
  fieldsIn(node).some((f) => columnOf(c, f)?.money);

/** Turns a parsed `where` tree into a Kysely expression; every value becomes a bound parameter. */
export function whereToSql(
  c: Collection,
  node: WhereNode,
  eb: EB,
  db: Executor,
  caller?: Caller,
  account: WhereAccount = {},
): Expression<SqlBool> {
  if (node.type !== 'cmp') {
    const parts = [
      whereToSql(c, node.left, eb, db, caller, account),
      whereToSql(c, node.right, eb, db, caller, account),
    ];
    return node.type === 'and' ? eb.and(parts) : eb.or(parts);
  }
  const col = c.columns.get(node.field) ?? account.custom?.get(node.field);
  if (!col) {
    const listed = listMember(c, node.field);
    if (listed) return listedTerm(c, listed, node, eb, caller);
    const path = assocPath(c, node.field);
    if (!path) throw bad(`unknown field '${node.field}'`);
    // An item without the association has no associated row: no term on its members matches it.
    const term = (inner: EB) => compare(node, path.col, `${ASSOC}.${path.col.column}`, inner, db, account);
    // Indexed: `<column> in (the matching associated rows)`, one subquery for the statement (a
    // trigram index of the target's member narrows it), where an `exists` per item reads the items
    // one by one; `where` has no negation, so a null `in` is as false as a missing row.
    if (account.indexed !== false)
      return eb(`${c.table}.${path.field.column}`, 'in', matching(path, caller, eb).select(`${ASSOC}.id`).where(term));
    return eb.exists(associated(c, path, caller, eb).select(`${ASSOC}.id`).where(term));
  }
  return compare(node, col, `${c.table}.${col.column}`, eb, db, account);
}

/**
 * The same `where` tree as a test of stored rows in memory, for the terms memory decides exactly as
 * the database does: `=` and `!=` of a string on a non-null text column of the collection's own
 * (not a computed one) that the rows carry (`columns`), joined by and/or. The literal is bound as
 * whereToSql binds it. Undefined for any other `where`: then only the database can answer.
 */
export function whereTest(
  c: Collection,
  node: WhereNode,
  columns: ReadonlySet<string>,
): ((row: Readonly<Record<string, unknown>>) => boolean) | undefined {
  if (node.type !== 'cmp') {
    const l = whereTest(c, node.left, columns);
    const r = l && whereTest(c, node.right, columns);
    if (!l || !r) return undefined;
    return node.type === 'and' ? (row) => l(row) && r(row) : (row) => l(row) || r(row);
  }
  const col = c.columns.get(node.field);
  const { op } = node;
  if (!col || col.expr || col.nullable || !columns.has(col.column) || (op !== '=' && op !== '!=')) return undefined;
  const compare = KINDS[col.type].compare;
  if (!compare?.text || (col.ops && !col.ops.includes(op)) || typeof node.value !== 'string') return undefined;
  const bound = compare.bind(node.value, col, undefined);
  if ('why' in bound) return undefined;
  const { column } = col;
  const value = bound.value;
  return op === '=' ? (row) => row[column] === value : (row) => row[column] !== value;
}

/** Refuses (400) a `where` its collection's list would refuse: an unknown field, a value of the wrong type. */
export function checkWhere(c: Collection, node: WhereNode, db: Executor): void {
  untyped(db)
    .selectFrom(c.table)
    .select(`${c.table}.id`)
    .where((eb: EB) => whereToSql(c, node, eb, db))
    .compile();
}

/** The association list a name such as `assets.id` denotes (only its `id`), or undefined. */
function listMember(c: Collection, name: string): AssocListField | undefined {
  const [root, member, ...rest] = name.split('.');
  const field = c.fields[root];
  return member === 'id' && !rest.length && field?.kind === 'assocList' ? field : undefined;
}

/**
 * `<list>.id = N` (PRODUCT §16: `where=assets.id = 7`, the jobs that include asset 7) and `!=`:
 * whether the item's list holds that id, through the link table in the caller's account; the
 * caller must be able to read the listed collection.
 */
function listedTerm(
  c: Collection,
  field: AssocListField,
  node: Extract<WhereNode, { type: 'cmp' }>,
  eb: EB,
  caller: Caller | undefined,
): Expression<SqlBool> {
  if (!caller) throw bad(`unknown field '${node.field}'`);
  const target = field.targetCollection;
  if (target) gateThrough(target, caller);
  const { op, value } = node;
  if (op !== '=' && op !== '!=') throw bad(`'${node.field}' takes = or !=, not '${op}'`);
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > INT32_MAX)
    throw bad(`'${node.field}' needs an integer from 1 to ${INT32_MAX}`);
  // `id in (the link table's rows of that id)`: the link table's index (account, other) drives
  // it, where an `exists` per item made the database scan every item of the account.
  const listing = eb
    .selectFrom(`${field.through} as ${ASSOC}`)
    .select(`${ASSOC}.${field.own}`)
    .where((inner) =>
      inner.and([
        inner(`${ASSOC}.account_id`, '=', caller.accountId),
        inner(`${ASSOC}.${field.other}`, '=', sql<number>`cast(${value} as bigint)`),
      ]),
    );
  const holds = eb(`${c.table}.id`, 'in', listing);
  return op === '=' ? holds : eb.not(holds);
}

/**
 * One term on one column (`col.expr`: a computed column, such as a custom field's JSON member);
 * `account.exponent`: the account currency's decimals, which a money member's value may carry at most.
 */
function compare(
  node: Extract<WhereNode, { type: 'cmp' }>,
  col: FilterColumn,
  column: string,
  eb: EB,
  db: Executor,
  account: WhereAccount,
): Expression<SqlBool> {
  const { exponent } = account;
  const ref = col.expr ?? eb.ref(column);
  const { op, value } = node;
  if (col.ops && !col.ops.includes(op)) throw bad(`'${node.field}' takes ${col.ops.join(' ')}, not '${op}'`);

  if (value === null) {
    if (op !== '=' && op !== '!=') throw bad(`null can only be compared with = or !=`);
    return op === '=' ? eb(ref, 'is', null) : eb(ref, 'is not', null);
  }
  const kind = KINDS[col.type];
  if (op === '~' || op === '!~') {
    if (!kind.compare?.text) throw bad(`'${node.field}' is not text; '${op}' needs text`);
    if (typeof value !== 'string') throw bad(`'${op}' needs a quoted string`);
    // The value lowered here as the database lowers the stored text (src/db/text.ts).
    const lowered = lowerText(value);
    const pattern = `%${lowered.replace(/[\\%_]/g, (m) => `\\${m}`)}%`;
    const like = sql<SqlBool>`${dialectOf(db).lower(ref)} like ${pattern} escape '\\'`;
    if (op === '~') {
      // A member declared `contains` has a trigram index (migration 140): it narrows the rows to
      // those holding the term's trigrams, and the `like` still decides (src/db/dialect.ts).
      const indexed =
        account.indexed !== false && col.contains && !col.expr && [...lowered].length >= CONTAINS_MIN
          ? dialectOf(db).containsMatch(`${column.slice(0, column.lastIndexOf('.'))}.id`, col.contains, lowered)
          : undefined;
      return indexed ? eb.and([indexed, like]) : like;
    }
    const notLike = sql<SqlBool>`not (${like})`;
    return col.nullable ? eb.or([eb(ref, 'is', null), notLike]) : notLike;
  }
  const raw = bindValue(node.field, col, value, exponent);
  const indexed = op === '=' ? col.equals?.(value) : undefined;
  if (indexed) return indexed;
  // Bound as bigint so the comparison never depends on how a driver types the parameter;
  // bindValue has already refused values the column cannot hold. Both dialects know the cast.
  const bound = kind.compare!.bigint ? sql<number>`cast(${raw} as bigint)` : raw;
  if (op === '!=' && col.nullable) return eb.or([eb(ref, 'is', null), eb(ref, '<>', bound)]);
  if (!kind.compare!.ordered && op !== '=' && op !== '!=') throw bad(`'${node.field}' is ${kind.noun}; use = or !=`);
  return eb(ref, op === '!=' ? '<>' : op, bound);
}

/** A literal as its column holds it (the member's kind decides), or the refusal naming the member. */
function bindValue(
  field: string,
  col: FilterColumn,
  value: Exclude<Value, null>,
  exponent: number | undefined,
): string | number {
  const compare = KINDS[col.type].compare;
  if (!compare) throw bad(`'${field}' cannot be filtered`);
  const bound = compare.bind(value, col, exponent);
  if ('why' in bound) throw bad(`'${field}' ${bound.why}`);
  return bound.value;
}

/** Whether a `where` reads other tables (an association member): its answers follow their changes too. */
export function readsElsewhere(c: Collection, node: WhereNode): boolean {
  if (node.type !== 'cmp') return readsElsewhere(c, node.left) || readsElsewhere(c, node.right);
  return !c.columns.has(node.field);
}

/**
 * The collections a `where` reads through association members, or undefined when one of them is
 * no counted collection (its changes move no version: such counts are not remembered).
 */
export function elsewhereTables(c: Collection, node: WhereNode): string[] | undefined {
  if (node.type !== 'cmp') {
    const [l, r] = [elsewhereTables(c, node.left), elsewhereTables(c, node.right)];
    return l && r ? [...new Set([...l, ...r])] : undefined;
  }
  if (c.columns.has(node.field)) return [];
  const target = assocPath(c, node.field)?.field.targetCollection;
  return target?.counted ? [target.table] : undefined;
}
