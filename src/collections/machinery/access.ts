import { ApiError } from '../../errors.js';
import { permissionFor, type Caller, type Collection, type RoleRule } from './collection.js';

/**
 * The one gate of a collection (PRODUCT §2: "permission granted to the token AND allowed by the
 * owner's role"): 403 `permissionMissing` without the token's `<collection>.<need>`, 403
 * `roleForbids` when the role has no access, else the role's access. Every path that reads or
 * writes a collection asks it: the dispatcher for the route's collection, and a member reached
 * through another collection (an association member in `fields`, `where` or `sort`, a listed
 * `<list>.id`), the event stream.
 */
export function gate(
  c: Collection,
  caller: Caller,
  need: 'read' | 'write',
  why?: string,
  action?: string,
  item?: number,
): 'all' | 'own' {
  const refused = refusal(c, caller, need, action, item);
  if (refused === 'permissionMissing') throw new ApiError('permissionMissing', permissionFor(c, need));
  if (refused === 'roleForbids') throw new ApiError('roleForbids', why);
  if (refused === 'actionForbids') throw new ApiError('roleForbids', ruleOf(c, action!)?.why);
  return c.policy[need][caller.role] as 'all' | 'own';
}

/** Why the gate refuses, or undefined: one check behind `gate` (which throws) and `passes` (which answers). */
function refusal(
  c: Collection,
  caller: Caller,
  need: 'read' | 'write',
  action?: string,
  item?: number,
): 'permissionMissing' | 'roleForbids' | 'actionForbids' | undefined {
  if (!caller.permissions.has(permissionFor(c, need))) return 'permissionMissing';
  if (c.policy[need][caller.role] === 'none') return 'roleForbids';
  if (action !== undefined && accessOf(c, caller, action, item) === 'none') return 'actionForbids';
  return undefined;
}

/** The declared rule of an action, or of an operation narrower than `write` (policy.actions, policy.delete). */
export const ruleOf = (c: Collection, what: string): RoleRule | undefined =>
  what === 'delete' ? c.policy.delete : c.policy.actions?.[what];

/**
 * What the access layer answers for a caller on one thing of a collection (`read`, `create`,
 * `update`, `delete` or an action's name, with the URL's item id when it has one), the token
 * holding every permission: 'none' where the dispatcher or the write pipeline refuses with 403
 * roleForbids before looking at any item; else the role's access ('own': the policy's scope).
 */
export function accessOf(
  c: Collection,
  caller: Pick<Caller, 'role' | 'userId'>,
  what: string,
  item?: number,
): 'all' | 'own' | 'none' {
  const reads = what === 'read' || c.getActions?.includes(what) || c.readActions?.includes(what);
  const base = c.policy[reads ? 'read' : 'write'][caller.role];
  if (base === 'none') return 'none';
  // An 'own' writer creates only what its policy can own (ownsNew); without it, nothing.
  if (what === 'create' && base === 'own' && !c.policy.ownsNew) return 'none';
  const rule = ruleOf(c, what);
  if (rule?.roles && !rule.roles.includes(caller.role)) return 'none';
  if (rule?.item && item !== undefined && !rule.item(caller, item)) return 'none';
  return base;
}

/** 403 roleForbids, with the declared rule's words, where `accessOf` answers 'none'. */
export function demand(c: Collection, caller: Pick<Caller, 'role' | 'userId'>, what: string, item?: number): void {
  if (accessOf(c, caller, what, item) === 'none') throw new ApiError('roleForbids', ruleOf(c, what)?.why);
}

/** The rows of a collection the caller reads: 'own' narrows them by the policy's scope. */
export function readAccess(c: Collection, caller: Caller): 'all' | 'own' {
  return c.policy.read[caller.role] === 'own' && !c.policy.everyRow?.(caller) ? 'own' : 'all';
}

/**
 * The gate for a collection read through another's member (the message names the collection),
 * answering the scope its rows are read with.
 */
export function gateThrough(target: Collection, caller: Caller): 'all' | 'own' {
  gate(target, caller, 'read', `${target.name} are not readable with this role`);
  return readAccess(target, caller);
}

/** Whether the caller passes the gate, without throwing (`fields=[*]` leaves unreadable members as `{id}`). */
export const passes = (c: Collection, caller: Caller, need: 'read' | 'write'): boolean =>
  refusal(c, caller, need) === undefined;
