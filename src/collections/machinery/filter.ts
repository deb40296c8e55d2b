import { sql, type Expression, type SqlBool } from 'kysely';
import { lowerText } from '../../db/text.js';
import { dialectOf, type Executor } from '../../db/runner.js';
import { ApiError } from '../../errors.js';
import type { Collection, EB, FilterColumn } from './collection.js';
import { INT32_MAX, INT32_MIN } from './fields.js';
import { scaledProblem, toScaled } from './money.js';
import type { Value, WhereNode } from './where.js';

const bad = (why: string) => new ApiError('badModifier', `where: ${why}`);

/** Turns a parsed `where` tree into a Kysely expression; every value becomes a bound parameter. */
export function whereToSql(c: Collection, node: WhereNode, eb: EB, db: Executor): Expression<SqlBool> {
  if (node.type !== 'cmp') {
    const parts = [whereToSql(c, node.left, eb, db), whereToSql(c, node.right, eb, db)];
    return node.type === 'and' ? eb.and(parts) : eb.or(parts);
  }
  const col = c.columns.get(node.field);
  if (!col) throw bad(`unknown field '${node.field}'`);
  const ref = eb.ref(`${c.table}.${col.column}`);
  const { op, value } = node;

  if (value === null) {
    if (op !== '=' && op !== '!=') throw bad(`null can only be compared with = or !=`);
    return op === '=' ? eb(ref, 'is', null) : eb(ref, 'is not', null);
  }
  if (op === '~' || op === '!~') {
    if (col.type !== 'string' && col.type !== 'datetime') throw bad(`'${node.field}' is not text; '${op}' needs text`);
    if (typeof value !== 'string') throw bad(`'${op}' needs a quoted string`);
    // The value lowered here as the database lowers the stored text (src/db/text.ts).
    const pattern = `%${lowerText(value).replace(/[\\%_]/g, (m) => `\\${m}`)}%`;
    const like = sql<SqlBool>`${dialectOf(db).lower(ref)} like ${pattern} escape '\\'`;
    if (op === '~') return like;
    const notLike = sql<SqlBool>`not (${like})`;
    return col.nullable ? eb.or([eb(ref, 'is', null), notLike]) : notLike;
  }
  const raw = bindValue(node.field, col, value);
  // Bound as bigint so the comparison never depends on how a driver types the parameter;
  // bindValue has already refused values the column cannot hold. Both dialects know the cast.
  const bound = col.type === 'integer' || col.type === 'flag' ? sql<number>`cast(${raw} as bigint)` : raw;
  if (op === '!=' && col.nullable) return eb.or([eb(ref, 'is', null), eb(ref, '<>', bound)]);
  if (col.type === 'boolean' && op !== '=' && op !== '!=') throw bad(`'${node.field}' is a boolean; use = or !=`);
  return eb(ref, op === '!=' ? '<>' : op, bound);
}

/** What an integer column stores (int4, or bigint for wide columns, read back as safe integers). */
function integerRange(col: FilterColumn): [number, number] {
  return col.wide ? [Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER] : [INT32_MIN, INT32_MAX];
}

function bindValue(field: string, col: FilterColumn, value: Exclude<Value, null>): string | number {
  const type = col.type;
  switch (type) {
    case 'string':
    case 'datetime':
      if (typeof value !== 'string') throw bad(`'${field}' needs a quoted string`);
      return value;
    case 'integer':
    case 'flag':
    case 'number':
      if (typeof value !== 'number') throw bad(`'${field}' needs a number`);
      if (col.scale !== undefined) {
        const why = scaledProblem(value, col.scale);
        if (why) throw bad(`'${field}' ${why}`);
        return toScaled(value, col.scale);
      }
      if (type !== 'number') {
        const [min, max] = integerRange(col);
        if (!Number.isInteger(value) || value < min || value > max)
          throw bad(`'${field}' needs an integer from ${min} to ${max}`);
      }
      return value;
    case 'boolean':
      if (typeof value !== 'boolean') throw bad(`'${field}' needs true or false`);
      return value ? 1 : 0;
    case 'time': {
      const ms = typeof value === 'string' ? Date.parse(value) : NaN;
      if (!Number.isFinite(ms)) throw bad(`'${field}' needs a quoted ISO 8601 date-time`);
      return ms;
    }
    default:
      throw bad(`'${field}' cannot be filtered`);
  }
}
