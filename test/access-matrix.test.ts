import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { addUser, appWithTenants, call, type Tenant, type TestApp } from './helpers.js';
import { ERRORS } from '../src/errors.js';
import { registry } from '../src/collections/index.js';
import { accessOf } from '../src/collections/machinery/access.js';
import { defineCollection, type RoleKind } from '../src/collections/machinery/collection.js';
import { f } from '../src/collections/machinery/fields.js';

/**
 * The access layer is the one answer to "may this role do this here" (docs/design.md, "Where
 * things go"): every route of every collection (read, create, update, delete and each action), for
 * every role, with a token holding every permission, is asked of the server and of the access
 * layer (`accessOf`), and the server refuses with 403 roleForbids before looking at any item
 * exactly where the access layer says 'none'. A collection whose action has no declared rule does
 * not even load.
 */
const ROLES: RoleKind[] = ['administrator', 'employee', 'contractor'];
const MISSING = 2_000_000_000;

/** Each thing of a collection and the request that asks it (an id no item has: the role's answer comes first). */
interface Ask {
  what: string;
  method: string;
  url: string;
  body?: unknown;
  item?: number;
}
function asks(c: (typeof registry.list)[number]): Ask[] {
  const out: Ask[] = [{ what: 'read', method: 'GET', url: `/${c.name}?recordsPerPage=1` }];
  if (!c.readOnly) out.push({ what: 'create', method: 'POST', url: `/${c.name}`, body: { [c.name]: [{}] } });
  if (!c.readOnly && !c.appendOnly) {
    out.push({
      what: 'update',
      method: 'PATCH',
      url: `/${c.name}/${MISSING}`,
      body: { [c.name]: [{}] },
      item: MISSING,
    });
    out.push({ what: 'delete', method: 'DELETE', url: `/${c.name}/${MISSING}`, item: MISSING });
  }
  for (const action of Object.keys(c.actions ?? {})) {
    const get = c.getActions?.includes(action);
    const on = { what: action, method: get ? 'GET' : 'POST', body: get ? undefined : {} };
    out.push({ ...on, url: `/${c.name}/${MISSING}/${action}`, item: MISSING }, { ...on, url: `/${c.name}/${action}` });
  }
  return out;
}

describe('every route × role × action asks the access layer', () => {
  let t: TestApp;
  let a: Tenant;
  const tokens = {} as Record<RoleKind, string>;
  const callers = {} as Record<RoleKind, { role: RoleKind; userId: number }>;
  before(async () => {
    ({ t, a } = await appWithTenants('sqlite'));
    tokens.administrator = a.token;
    callers.administrator = { role: 'administrator', userId: a.adminId };
    for (const role of ['employee', 'contractor'] as const) {
      const u = await addUser(t, a, role);
      tokens[role] = u.token;
      callers[role] = { role, userId: u.id };
    }
  });
  after(() => t?.close());

  test('the server refuses with roleForbids exactly where accessOf answers none', async () => {
    const mismatches: string[] = [];
    let refused = 0;
    let let_through = 0;
    for (const c of registry.list) {
      for (const ask of asks(c)) {
        for (const role of ROLES) {
          const res = await call(t.app, tokens[role], ask.method, ask.url, ask.body);
          // No such route (an item of an append-only collection), or an action that takes an item asked without one.
          if (res.status === 405 || (res.status === 404 && res.body?.error?.code === ERRORS.unknownAction.code))
            continue;
          const forbidden = res.status === 403 && res.body?.error?.code === ERRORS.roleForbids.code;
          const access = accessOf(c, callers[role], ask.what, ask.item);
          const none = access === 'none';
          if (none) refused++;
          else let_through++;
          if (forbidden !== none)
            mismatches.push(
              `${role} ${ask.method} ${ask.url}: server ${res.status} ${res.raw.slice(0, 120)}; access layer ${access}`,
            );
        }
      }
    }
    assert.deepEqual(mismatches, []);
    // Both answers occur, so the comparison means something.
    assert.ok(refused > 30 && let_through > 100, `${refused} refused, ${let_through} let through`);
  });

  test('declared rules: an Employee has no account action, a Contractor deletes no job and books nothing', () => {
    const employee = { role: 'employee' as const, userId: 5 };
    const contractor = { role: 'contractor' as const, userId: 6 };
    const administrator = { role: 'administrator' as const, userId: 7 };
    const users = registry.get('users')!;
    const jobs = registry.get('jobs')!;
    const payments = registry.get('payments')!;
    assert.equal(accessOf(users, employee, 'account'), 'none');
    assert.equal(accessOf(users, administrator, 'account'), 'all');
    assert.equal(accessOf(jobs, contractor, 'delete'), 'none');
    assert.equal(accessOf(jobs, contractor, 'update'), 'own');
    for (const action of ['slots', 'book', 'report', 'bookingLink', 'unshare'])
      assert.equal(accessOf(jobs, contractor, action), 'none', action);
    assert.equal(accessOf(payments, employee, 'delete'), 'none');
    assert.equal(accessOf(payments, employee, 'create'), 'all');
    assert.equal(accessOf(jobs, contractor, 'create'), 'none', 'an own writer without ownsNew creates nothing');
    assert.equal(accessOf(users, employee, 'calendarLink', 5), 'all', 'their own feed');
    assert.equal(accessOf(users, employee, 'calendarLink', 6), 'none', "another's");
    assert.equal(accessOf(users, administrator, 'calendarUnlink', 6), 'all');
  });

  test('a collection with an action and no rule for it does not load', () => {
    const base = {
      name: 'gadgets',
      table: 'notes',
      fields: { text: f.string('text', { required: true }) },
      example: { text: 'x' },
      policy: {
        read: { administrator: 'all', employee: 'all', contractor: 'none' },
        write: { administrator: 'all', employee: 'all', contractor: 'none' },
      },
      actions: { polish: async () => ({ status: 200, body: {} }) },
    } as const;
    assert.throws(() => defineCollection(base as never), /gadgets: no access rule \(policy\.actions\) for polish/);
    assert.doesNotThrow(() =>
      defineCollection({ ...base, policy: { ...base.policy, actions: { polish: {} } } } as never),
    );
  });
});
