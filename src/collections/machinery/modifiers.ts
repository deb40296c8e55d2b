import { ApiError } from '../../errors.js';
import type { Collection } from './collection.js';
import { parseWhere, type WhereNode } from './where.js';
import { parseNear, type Near } from './near.js';
import { assocPath, type AssocPath } from './filter.js';
import { isCustomName } from './custom.js';
import { parseSearch } from './search.js';

/** Which members to return: root fields, and for each association which members ('*' = all). */
export interface Projection {
  fields: string[];
  expand: Map<string, Set<string> | '*'>;
}

export interface ListQuery {
  projection: Projection;
  where?: WhereNode;
  /**
   * `assoc`: an association member (`client.name`), read from the associated row (filter.ts);
   * `custom`: a `customFields.<key>` name, resolved against the account's definitions by the list.
   */
  sort: { column: string; desc: boolean; assoc?: AssocPath; custom?: string }[];
  /** The words of `q` (PRODUCT §12); none or undefined: no search. */
  search?: string[];
  /** No `sort` was given: a search ranks (best first, then id). */
  ranked?: boolean;
  page: number;
  recordsPerPage: number;
  /** `near=lat,lng[,radiusKm]` (machinery/near.ts). */
  near?: Near;
}

export const DEFAULT_PAGE_SIZE = 50;
export const MAX_PAGE_SIZE = 1000;
export const MAX_PAGE = 1_000_000_000;
const NAME = /^[A-Za-z][A-Za-z0-9]*$/;

export function parseFields(c: Collection, raw: unknown): Projection {
  if (raw === undefined) return { fields: c.defaultFields, expand: new Map() };
  if (typeof raw !== 'string' || raw.trim() === '')
    throw new ApiError('badModifier', 'fields must be a non-empty list');
  const names = raw.split(',').map((s) => s.trim());
  let all = false;
  let expandAll = false;
  const picked = new Set<string>();
  const members = new Map<string, Set<string>>();
  // `fields=id` selects the id alone (spec §3: fields selects; id is always included).
  let named = false;
  for (const name of names) {
    if (name === '*') all = true;
    else if (name === '[*]') expandAll = true;
    else if (name === 'id') named = true;
    else {
      const [root, member, ...rest] = name.split('.');
      const field = c.fields[root];
      if (!NAME.test(root) || rest.length > 0 || !field || field.kind === 'writeOnly') {
        throw new ApiError('badModifier', `fields: unknown field '${name}'`);
      }
      picked.add(root);
      if (member !== undefined) {
        if (field.kind !== 'assoc' || (member !== 'id' && !(member in field.members))) {
          throw new ApiError('badModifier', `fields: unknown member '${name}'`);
        }
        if (!members.has(root)) members.set(root, new Set());
        members.get(root)!.add(member);
      }
    }
  }
  const base = all ? c.allFields : picked.size > 0 || named ? [] : c.defaultFields;
  const fields = [...new Set([...base, ...picked])];
  const expand = new Map<string, Set<string> | '*'>();
  for (const name of fields) {
    const kind = c.fields[name].kind;
    if (kind !== 'assoc' && kind !== 'assocList') continue;
    if (expandAll) expand.set(name, '*');
    else if (members.has(name)) expand.set(name, members.get(name)!);
  }
  return { fields, expand };
}

export function positiveInt(raw: unknown, name: string, fallback: number, max: number): number {
  if (raw === undefined) return fallback;
  // Up to 10 digits: `max` (1,000,000,000 for page) is accepted; longer text is refused unparsed.
  const n = typeof raw === 'string' && /^\d{1,10}$/.test(raw) ? Number(raw) : NaN;
  if (!Number.isInteger(n) || n < 1 || n > max) {
    throw new ApiError('badModifier', `${name} must be an integer from 1 to ${max}`);
  }
  return n;
}

export function parseListQuery(c: Collection, query: Record<string, unknown>): ListQuery {
  for (const [k, v] of Object.entries(query)) {
    if (!['fields', 'where', 'sort', 'page', 'recordsPerPage', 'near', 'q'].includes(k)) {
      throw new ApiError(
        'badModifier',
        `unknown query parameter '${k.slice(0, 64)}' (lists take fields, where, sort, q, near, page and recordsPerPage)`,
      );
    }
    if (typeof v !== 'string') throw new ApiError('badModifier', `${k} is given more than once`);
  }
  const sort: ListQuery['sort'] = [];
  if (query.sort !== undefined) {
    for (const part of String(query.sort).split(',')) {
      const desc = part.startsWith('-');
      const name = desc ? part.slice(1) : part.startsWith('+') ? part.slice(1) : part;
      const col = c.columns.get(name);
      if (!col && c.customFields && isCustomName(name)) {
        sort.push({ column: name, desc, custom: name });
        continue;
      }
      const assoc = col ? undefined : assocPath(c, name);
      if (assoc) {
        sort.push({ column: name, desc, assoc });
        continue;
      }
      if (!col) throw new ApiError('badModifier', `sort: unknown field '${name}'`);
      sort.push({ column: col.column, desc });
    }
  }
  if (!sort.some((s) => s.column === 'id')) sort.push({ column: 'id', desc: false });
  const near = query.near === undefined ? undefined : parseNear(c, String(query.near), query.sort !== undefined);
  const projection = parseFields(c, query.fields);
  // With `near`, every item says how far it is.
  if (near && !projection.fields.includes('distance')) projection.fields = [...projection.fields, 'distance'];
  return {
    near,
    projection,
    where: query.where === undefined ? undefined : parseWhere(String(query.where)),
    sort,
    search: parseSearch(c, query.q),
    ranked: query.sort === undefined,
    page: positiveInt(query.page, 'page', 1, MAX_PAGE),
    recordsPerPage: positiveInt(query.recordsPerPage, 'recordsPerPage', DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE),
  };
}
