import { ALL_PERMISSIONS, COLLECTION_NAMES } from '../../collections/index.js';

/**
 * Permissions in words for the owner, derived from their names (`<collection>.read|write`), so a new
 * collection needs no wording of its own. Used by the consent page and any page that lists grants.
 */
export interface PermissionWords {
  /** The permission's name, `jobs.read`, shown beside the words. */
  permission: string;
  collection: string;
  access: 'read' | 'write';
  /** "Read jobs", "Change users". */
  words: string;
  /** What it allows, a few more words. */
  detail: string;
}

export interface PermissionGroup {
  collection: string;
  /** "Jobs". */
  title: string;
  permissions: PermissionWords[];
}

const human = (collection: string) => collection.replace(/([a-z])([A-Z])/g, '$1 $2').toLowerCase();
const capital = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);

export function permissionWords(permission: string): PermissionWords {
  const dot = permission.lastIndexOf('.');
  const collection = permission.slice(0, dot);
  const access = permission.slice(dot + 1) === 'write' ? 'write' : 'read';
  const what = human(collection);
  return access === 'write'
    ? { permission, collection, access, words: `Change ${what}`, detail: `create, change and delete ${what}` }
    : { permission, collection, access, words: `Read ${what}`, detail: `see the account's ${what}` };
}

/** Grouped by collection, collections in the service's order, read before write. */
export function groupPermissions(permissions: readonly string[]): PermissionGroup[] {
  const order = (c: string) => {
    const i = COLLECTION_NAMES.indexOf(c);
    return i < 0 ? COLLECTION_NAMES.length : i;
  };
  const groups = new Map<string, PermissionWords[]>();
  for (const w of permissions.map(permissionWords)) groups.set(w.collection, [...(groups.get(w.collection) ?? []), w]);
  return [...groups]
    .sort(([a], [b]) => order(a) - order(b))
    .map(([collection, list]) => ({
      collection,
      title: capital(human(collection)),
      permissions: list.sort((a, b) => (a.access === b.access ? 0 : a.access === 'read' ? -1 : 1)),
    }));
}

/** What a set of permissions allows, area by area, in a few lines (consent and connected-apps pages). */
export interface PermissionSummary {
  /** Every permission of every collection. */
  everything: boolean;
  /** Areas by what the permissions allow there: titles, in the service's order. */
  readAndChange: string[];
  readOnly: string[];
  changeOnly: string[];
  count: number;
}

export function summarisePermissions(permissions: readonly string[]): PermissionSummary {
  const groups = groupPermissions([...new Set(permissions)]);
  const out: PermissionSummary = { everything: false, readAndChange: [], readOnly: [], changeOnly: [], count: 0 };
  for (const g of groups) {
    const read = g.permissions.some((p) => p.access === 'read');
    const write = g.permissions.some((p) => p.access === 'write');
    (read && write ? out.readAndChange : read ? out.readOnly : out.changeOnly).push(g.title);
    out.count += g.permissions.length;
  }
  const given = new Set(permissions);
  out.everything = ALL_PERMISSIONS.every((p) => given.has(p));
  return out;
}
