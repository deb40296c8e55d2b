import { permissionFor, type Collection } from './collection.js';
import type { Registry } from './contracts.js';

export type { Registry } from './contracts.js';
import { REFERENCE_TABLES, type AssocField, type AssocListField, type ScalarField, type Target } from './fields.js';

/**
 * Association members are the target's own field declarations (column, type, schema), picked by
 * name: `client.name` is whatever `clients` declares `name` to be, so the two cannot drift.
 */
function resolve(
  field: AssocField | AssocListField,
  owner: string,
  targets: (name: string) => Target | undefined,
): void {
  const target = targets(field.target);
  if (!target) throw new Error(`${owner}: unknown association target '${field.target}'`);
  field.table = target.table;
  if (field.kind === 'assoc') field.accountColumn = target.accountColumn;
  field.members = {};
  for (const m of field.memberNames) {
    const member = target.fields[m];
    if (member?.kind !== 'scalar') throw new Error(`${owner}: '${field.target}' has no scalar field '${m}'`);
    field.members[m] = member as ScalarField;
  }
}

export function createRegistry(list: Collection[]): Registry {
  const byName = new Map(list.map((c) => [c.name, c]));
  const targets = (name: string): Target | undefined => {
    const c = byName.get(name);
    return c ? { table: c.table, accountColumn: 'account_id', fields: c.fields } : REFERENCE_TABLES[name];
  };
  for (const c of list) {
    for (const [name, field] of Object.entries(c.fields)) {
      if (field.kind === 'assoc' || field.kind === 'assocList') resolve(field, `${c.name}.${name}`, targets);
      if (field.kind === 'assoc' || field.kind === 'assocList') field.targetCollection = byName.get(field.target);
    }
  }
  return {
    list,
    get: (name) => byName.get(name),
    // Read-only collections have no write permission; collections sharing one name it once.
    permissions: [
      ...new Set(
        list.flatMap((c) =>
          c.readOnly ? [permissionFor(c, 'read')] : [permissionFor(c, 'read'), permissionFor(c, 'write')],
        ),
      ),
    ],
  };
}
