import { ApiError } from '../../errors.js';
import { isPeriod, type DateSource, type Period } from '../../time/period.js';
import type { Collection } from './collection.js';
import type { ScalarField } from './fields.js';
import { KINDS } from './kinds/index.js';
import { DEFAULT_PAGE_SIZE, MAX_PAGE, MAX_PAGE_SIZE, positiveInt } from './modifiers.js';
import { parseWhere, type WhereNode } from './where.js';

/**
 * `GET /<collection>/summary` (PRODUCT §19): what `groupBy` and `aggregate` name, checked against
 * the collection's declaration before any SQL. Every refusal is a 400 naming the modifier.
 */
export const MAX_GROUPS = 3;
export const AGGREGATES = ['count', 'sum', 'avg', 'min', 'max'] as const;
export type AggregateFn = (typeof AGGREGATES)[number];

/** One group key: a scalar field, an association (`client`, shown `{id}`) or a period of a date. */
export type GroupKey =
  | { name: string; kind: 'scalar'; column: string; field: ScalarField }
  | { name: string; kind: 'assoc'; column: string }
  | { name: string; kind: 'period'; column: string; period: Period; source: DateSource };

export interface Aggregate {
  name: string;
  fn: AggregateFn;
  /** The field aggregated (none for count). */
  column?: string;
  field?: ScalarField;
  /** For min and max: a date-time text compared as an instant. */
  source?: DateSource;
}

export interface SummaryQuery {
  groups: GroupKey[];
  aggregates: Aggregate[];
  where?: WhereNode;
  page: number;
  recordsPerPage: number;
}

const PARAMS = ['groupBy', 'aggregate', 'where', 'page', 'recordsPerPage'];
const NAME = /^[A-Za-z][A-Za-z0-9]*(\.[A-Za-z][A-Za-z0-9]*)?$/;
const CALL = /^([A-Za-z]+)\((.*)\)$/;

const bad = (modifier: string, why: string) => new ApiError('badModifier', `${modifier}: ${why}`);
const shown = (s: string) => `'${s.slice(0, 64)}'`;

/** How a field holds a date, or undefined when it holds none. */
export function dateSource(field: ScalarField): DateSource | undefined {
  return KINDS[field.type].date?.(field);
}

/** Money, quantities, durations: what sum and avg add up. */
const isNumber = (field: ScalarField) => KINDS[field.type].sum !== undefined;

/** A default field's scalar (`total`, `address.city`), or undefined. */
function scalarOf(c: Collection, name: string): ScalarField | undefined {
  const [root, member] = name.split('.');
  if (!c.defaultFields.includes(root)) return undefined;
  const field = c.fields[root];
  const s = member === undefined ? field : field?.kind === 'object' ? field.members[member] : undefined;
  if (s?.kind !== 'scalar' || !KINDS[s.type].compare) return undefined;
  return s;
}

/** The comma-separated terms of a modifier, spaces around them dropped. */
function terms(modifier: string, raw: unknown): string[] {
  if (typeof raw !== 'string' || raw.trim() === '') throw bad(modifier, 'must be a non-empty comma-separated list');
  return raw.split(',').map((t) => t.replace(/\s+/g, ''));
}

/** `fn(field)` as [fn, field]; a call inside a call is nesting, refused. */
function call(modifier: string, term: string): [string, string] | undefined {
  const m = CALL.exec(term);
  if (!m) {
    if (/[()]/.test(term)) throw bad(modifier, `${shown(term)} is not fn(field)`);
    return undefined;
  }
  if (/[()]/.test(m[2])) throw bad(modifier, `${shown(term)} nests a function; write fn(field) of a field`);
  if (!NAME.test(m[2])) throw bad(modifier, `${shown(term)} needs a field name inside the parentheses`);
  return [m[1], m[2]];
}

function groupKey(c: Collection, term: string): GroupKey {
  const fnCall = call('groupBy', term);
  if (fnCall) {
    const [fn, name] = fnCall;
    if (!isPeriod(fn)) throw bad('groupBy', `unknown function ${shown(fn)} (day, week, month or year of a date)`);
    const field = scalarOf(c, name);
    if (!field) throw bad('groupBy', `unknown field ${shown(name)} of ${c.name}`);
    const source = dateSource(field);
    if (!source) throw bad('groupBy', `${shown(term)}: ${fn} needs a date or date-time field`);
    return { name: `${fn}(${name})`, kind: 'period', column: field.column, period: fn, source };
  }
  if (!NAME.test(term)) throw bad('groupBy', `${shown(term)} is no field name`);
  const field = c.fields[term];
  if (field?.kind === 'assoc' && c.defaultFields.includes(term))
    return { name: term, kind: 'assoc', column: field.column };
  const scalar = scalarOf(c, term);
  if (!scalar)
    throw bad('groupBy', `unknown field ${shown(term)} of ${c.name} (scalars and associations of its default fields)`);
  return { name: term, kind: 'scalar', column: scalar.column, field: scalar };
}

function aggregate(c: Collection, term: string): Aggregate {
  if (term === 'count') return { name: 'count', fn: 'count' };
  const fnCall = call('aggregate', term);
  if (!fnCall) throw bad('aggregate', `${shown(term)} is none of count, sum(f), avg(f), min(f), max(f)`);
  const [fn, name] = fnCall;
  if (fn === 'count') throw bad('aggregate', 'count takes no field: write count');
  if (!(AGGREGATES as readonly string[]).includes(fn))
    throw bad('aggregate', `unknown function ${shown(fn)} (count, sum, avg, min, max)`);
  const field = scalarOf(c, name);
  if (!field) throw bad('aggregate', `unknown field ${shown(name)} of ${c.name}`);
  const source = dateSource(field);
  const fits = isNumber(field) || ((fn === 'min' || fn === 'max') && source !== undefined);
  if (!fits)
    throw bad(
      'aggregate',
      `${shown(term)}: ${fn} needs a number field${fn === 'min' || fn === 'max' ? ' or a date or date-time' : ''}`,
    );
  return { name: `${fn}(${name})`, fn: fn as AggregateFn, column: field.column, field, source };
}

/** The summary's modifiers, or a 400 naming the one that is wrong. */
export function parseSummaryQuery(c: Collection, query: Record<string, unknown>): SummaryQuery {
  for (const [k, v] of Object.entries(query)) {
    if (!PARAMS.includes(k))
      throw new ApiError(
        'badModifier',
        `unknown query parameter ${shown(k)} (summaries take groupBy, aggregate, where, page and recordsPerPage)`,
      );
    if (typeof v !== 'string') throw new ApiError('badModifier', `${k} is given more than once`);
  }
  const groups = query.groupBy === undefined ? [] : terms('groupBy', query.groupBy).map((t) => groupKey(c, t));
  if (groups.length > MAX_GROUPS) throw bad('groupBy', `at most ${MAX_GROUPS} groups`);
  const aggregates =
    query.aggregate === undefined
      ? [aggregate(c, 'count')]
      : terms('aggregate', query.aggregate).map((t) => aggregate(c, t));
  for (const [modifier, list] of [
    ['groupBy', groups],
    ['aggregate', aggregates],
  ] as const) {
    const dup = list.find((x, i) => list.findIndex((y) => y.name === x.name) !== i);
    if (dup) throw bad(modifier, `${shown(dup.name)} is named twice`);
  }
  return {
    groups,
    aggregates,
    where: query.where === undefined ? undefined : parseWhere(String(query.where)),
    page: positiveInt(query.page, 'page', 1, MAX_PAGE),
    recordsPerPage: positiveInt(query.recordsPerPage, 'recordsPerPage', DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE),
  };
}
