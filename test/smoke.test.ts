import { test } from 'node:test';
import assert from 'node:assert/strict';
import { call, createTenant, createTestApp, newUser } from './helpers.js';

test('smoke', async () => {
  const t = await createTestApp('sqlite');
  try {
    const a = await createTenant(t);
    const list = await call(t.app, a.token, 'GET', '/users');
    console.log(list.status, list.headers, JSON.stringify(list.body));
    const created = await call(t.app, a.token, 'POST', '/users', { users: [newUser(a.accountId), newUser(a.accountId, { firstName: 'Carla' })] });
    console.log(created.status, JSON.stringify(created.body));
    const bad = await call(t.app, a.token, 'POST', '/users', { users: [{ account: { id: a.accountId } }, newUser(a.accountId, { colour: 'red', foo: 1 })] });
    console.log(bad.status, JSON.stringify(bad.body));
    const w = await call(t.app, a.token, 'GET', '/users?where=firstName+~+"car"&fields=*,[*]&sort=-id');
    console.log(w.status, JSON.stringify(w.body));
    const p = await call(t.app, a.token, 'PATCH', '/users', { users: [{ id: created.body.users[0].id, deleted: true, status: { message: 'away', timestamp: '2026-01-01T10:00:00+02:00' } }] });
    console.log(p.status, JSON.stringify(p.body));
    assert.equal(list.status, 200);
  } finally {
    await t.close();
  }
});
