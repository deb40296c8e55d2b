import type { Collection, Columns, Item } from './collection.js';
import type { AssocListField, ScalarField } from './fields.js';
import { kindOf } from './kinds/index.js';

/**
 * An account's export and import (PRODUCT §19), derived from the declarations: which collections,
 * in which order (references before the items that name them), and an item's stored row from its
 * members (the inverse of present.ts).
 */
export interface TransferPlan {
  /** The exported collections, each after every collection it references. */
  order: Collection[];
  /** `collection.field`: a nullable association of a cycle, restored once every item is in (a charge's `invoice`). */
  deferred: Set<string>;
  /** `collection.field`: a list that is the other side of another collection's (users' `workgroups`): no reference. */
  derived: Set<string>;
}

export const exported = (c: Collection): boolean => c.transfer?.exported !== false;

/** The references of a collection: association targets (nullable or not) and JSON members' targets. */
function referencesOf(c: Collection, names: Set<string>): { field: string; target: string; nullable: boolean }[] {
  const out: { field: string; target: string; nullable: boolean }[] = [];
  for (const [name, f] of Object.entries(c.fields)) {
    if (f.kind === 'assoc' && names.has(f.target) && f.target !== c.name)
      out.push({ field: name, target: f.target, nullable: !!f.nullable });
    if (f.kind === 'assocList' && f.oneWay && names.has(f.target))
      out.push({ field: name, target: f.target, nullable: false });
    if (f.kind === 'scalar' && f.references)
      for (const target of Object.values(f.references))
        if (names.has(target) && target !== c.name) out.push({ field: name, target, nullable: false });
  }
  return out;
}

/**
 * The order: registry order wherever references allow. Where a cycle leaves nothing placeable, a
 * nullable association on the cycle is deferred (restored after every item is in).
 */
export function transferPlan(list: readonly Collection[]): TransferPlan {
  const cs = list.filter(exported);
  const names = new Set(cs.map((c) => c.name));
  const refs = new Map(cs.map((c) => [c.name, referencesOf(c, names)]));
  const deferred = new Set<string>();
  const placed = new Set<string>();
  const order: Collection[] = [];
  const blockers = (c: Collection) =>
    refs.get(c.name)!.filter((r) => !placed.has(r.target) && !deferred.has(`${c.name}.${r.field}`));
  const reaches = (from: string, to: string, seen = new Set<string>()): boolean => {
    if (from === to) return true;
    if (seen.has(from)) return false;
    seen.add(from);
    const c = cs.find((x) => x.name === from)!;
    return blockers(c).some((r) => reaches(r.target, to, seen));
  };
  while (order.length < cs.length) {
    const next = cs.find((c) => !placed.has(c.name) && blockers(c).length === 0);
    if (next) {
      order.push(next);
      placed.add(next.name);
      continue;
    }
    const remaining = cs.filter((c) => !placed.has(c.name));
    const cut = remaining
      .flatMap((c) => blockers(c).map((r) => ({ c, r })))
      .find(({ c, r }) => r.nullable && reaches(r.target, c.name));
    if (!cut) throw new Error(`no export order: ${remaining.map((c) => c.name).join(', ')} reference each other`);
    deferred.add(`${cut.c.name}.${cut.r.field}`);
  }
  // Two lists over one link table: the later collection's holds the reference.
  const derived = new Set<string>();
  const position = new Map(order.map((c, i) => [c.name, i]));
  for (const c of order)
    for (const [name, f] of Object.entries(c.fields)) {
      if (f.kind !== 'assocList' || f.oneWay) continue;
      const other = order.find(
        (d) =>
          d !== c &&
          Object.values(d.fields).some((g) => g.kind === 'assocList' && g.through === f.through && g.target === c.name),
      );
      if (other && position.get(other.name)! > position.get(c.name)!) derived.add(`${c.name}.${name}`);
    }
  return { order, deferred, derived };
}

/** Why an import line is refused, with its line number (PRODUCT §19). */
export class ImportError extends Error {
  /** The same failure of a run of lines written together: `lines 4–9: …`. */
  withRange(last: number): ImportError {
    return new ImportError(this.message.replace(/^line (\d+):/, `lines $1–${last}:`));
  }
}

/** What an item's row names: the new id of an item of `target` exported with id `id`. */
export type Remap = (target: string, id: number, member: string) => number;

/** The links a list writes once every item is in: rows of `through` (own, other). */
export interface PendingLinks {
  field: AssocListField;
  ids: number[];
}

/** A deferred association: `column` of the new row set to the target's new id once it is in. */
export interface PendingRef {
  column: string;
  target: string;
  id: number;
  member: string;
}

const problem = (member: string, why: string) => new ImportError(`'${member.slice(0, 100)}' ${why}`);

const assocId = (v: unknown, member: string): number => {
  const id = (v as { id?: unknown } | null)?.id;
  if (typeof id !== 'number' || !Number.isSafeInteger(id) || id < 1) throw problem(member, 'must be {id} of an item');
  return id;
};

/** A `references` path's steps (fields.ts): a member's name, `*` or `[]`. */
const stepsOf = (path: string): string[] => path.match(/\[\]|\*|[^.[\]*]+/g) ?? [];

/**
 * A JSON value with each `{id}` at the field's `references` paths replaced by `to(target, ref,
 * member)` (`member` names where it is: `lines[0].taxRate`); copied where it changes, never modified.
 */
export function mapReferences(
  field: ScalarField,
  value: unknown,
  member: string,
  to: (target: string, ref: object, member: string) => unknown,
): unknown {
  let out = value;
  for (const [path, target] of Object.entries(field.references ?? {})) {
    const steps = stepsOf(path);
    const loose = steps.includes('*');
    const walk = (v: unknown, i: number, at: string): unknown => {
      if (v === null || v === undefined) return v;
      const object = typeof v === 'object' && !Array.isArray(v);
      if (i === steps.length) return loose && !object ? v : to(target, v as object, at);
      const step = steps[i];
      if (step === '[]') return Array.isArray(v) ? v.map((el, k) => walk(el, i + 1, `${at}[${k}]`)) : v;
      if (!object) return v;
      const o = v as Record<string, unknown>;
      if (step !== '*') return Object.hasOwn(o, step) ? { ...o, [step]: walk(o[step], i + 1, `${at}.${step}`) } : o;
      return Object.fromEntries(Object.entries(o).map(([k, el]) => [k, walk(el, i + 1, `${at}.${k}`)]));
    };
    out = walk(out, 0, member);
  }
  return out;
}

/** A JSON value with its references remapped to the new account's ids. */
const remapJson = (field: ScalarField, value: unknown, remap: Remap, member: string): unknown =>
  mapReferences(field, value, member, (target, ref, at) => ({ ...ref, id: remap(target, assocId(ref, at), at) }));

/**
 * A member as exported back into its columns of `row` (the inverse of its kind's `toApi`; a JSON
 * value's references remapped to the new account's ids first).
 */
export function restoreColumns(field: ScalarField, value: unknown, member: string, row: Columns, remap?: Remap): void {
  const given = remap && field.references && value !== null && value !== undefined;
  const why = kindOf(field).restore(field, given ? remapJson(field, value, remap, member) : value, row);
  if (why) throw problem(member, why);
}

/**
 * An exported item's stored row in the new account: every member back into its columns (read-only
 * ones too: numbers, totals, `created`, `modified`), associations remapped, computed members
 * dropped; lists and deferred associations come back to be written once every item is in.
 */
export function rowOf(
  c: Collection,
  plan: TransferPlan,
  item: Item,
  accountId: number,
  remap: Remap,
): { row: Columns; links: PendingLinks[]; later: PendingRef[] } {
  const row: Columns = {};
  const links: PendingLinks[] = [];
  const later: PendingRef[] = [];
  const hidden = c.transfer?.hidden ?? {};
  for (const [member, value] of Object.entries(item)) {
    if (member === 'id') continue;
    if (Object.hasOwn(hidden, member)) {
      if (value !== null && typeof value !== 'string') throw problem(member, 'must be a string or null');
      row[hidden[member]] = value;
      continue;
    }
    const field = c.fields[member];
    if (!field) throw problem(member, `is no member of ${c.name}`);
    switch (field.kind) {
      case 'scalar':
        restoreColumns(field, value, member, row, remap);
        break;
      case 'object': {
        if (value !== null && (typeof value !== 'object' || Array.isArray(value)))
          throw problem(member, 'must be an object');
        const o = (value ?? {}) as Record<string, unknown>;
        for (const [key, m] of Object.entries(field.members)) restoreColumns(m, o[key], `${member}.${key}`, row);
        break;
      }
      case 'assoc':
        if (field.target === 'accounts') row[field.column] = accountId;
        else if (value === null) row[field.column] = null;
        else if (plan.deferred.has(`${c.name}.${member}`)) {
          row[field.column] = null;
          later.push({ column: field.column, target: field.target, id: assocId(value, member), member });
        } else row[field.column] = remap(field.target, assocId(value, member), member);
        break;
      case 'assocList':
        if (plan.derived.has(`${c.name}.${member}`)) break;
        if (!Array.isArray(value)) throw problem(member, 'must be a list of {id}');
        links.push({ field, ids: value.map((v, i) => assocId(v, `${member}[${i}]`)) });
        break;
      default:
        // Computed members (a file's downloadUrl) are made again at every read.
        break;
    }
  }
  return { row, links, later };
}
