import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { ALL_PERMISSIONS, COLLECTION_NAMES } from '../../collections/index.js';
import { groupPermissions, permissionWords, summarisePermissions } from './permission-words.js';

describe('permissions in words', () => {
  test('derived from the names: every permission has words naming its collection', () => {
    assert.deepEqual(permissionWords('jobs.read'), {
      permission: 'jobs.read',
      collection: 'jobs',
      access: 'read',
      words: 'Read jobs',
      detail: "see the account's jobs",
    });
    assert.equal(permissionWords('users.write').words, 'Change users');
    assert.equal(permissionWords('users.write').detail, 'create, change and delete users');
    // A collection nobody wrote words for is worded all the same.
    assert.equal(permissionWords('timeSheets.write').words, 'Change time sheets');
    for (const p of ALL_PERMISSIONS) {
      const w = permissionWords(p);
      // camelCase names in words: taxRates → "tax rates".
      const words = w.collection.replace(/[A-Z]/g, (m) => ` ${m.toLowerCase()}`);
      assert.match(w.words, new RegExp(`^(Read|Change) ${words}$`));
    }
  });

  test('grouped by collection in the service order, read before write', () => {
    const groups = groupPermissions(['files.write', 'jobs.write', 'users.read', 'jobs.read']);
    assert.deepEqual(
      groups.map((g) => [g.title, g.permissions.map((p) => p.permission)]),
      [
        ['Users', ['users.read']],
        ['Jobs', ['jobs.read', 'jobs.write']],
        ['Files', ['files.write']],
      ],
    );
    // One group per collection that has permissions of its own (deliveries go by webhooks.read).
    assert.equal(groupPermissions(ALL_PERMISSIONS).length, new Set(ALL_PERMISSIONS.map((p) => p.split('.')[0])).size);
    assert.ok(COLLECTION_NAMES.length >= groupPermissions(ALL_PERMISSIONS).length);
  });
});

describe('permissions summarised by area', () => {
  test('areas read and changed, read only, changed only; everything when every permission is there', () => {
    const s = summarisePermissions(['files.write', 'jobs.write', 'users.read', 'jobs.read', 'jobs.read']);
    assert.deepEqual(s, {
      everything: false,
      readAndChange: ['Jobs'],
      readOnly: ['Users'],
      changeOnly: ['Files'],
      count: 4,
    });
    const all = summarisePermissions(ALL_PERMISSIONS);
    assert.equal(all.everything, true);
    assert.equal(all.count, ALL_PERMISSIONS.length);
    assert.equal(summarisePermissions(ALL_PERMISSIONS.slice(1)).everything, false);
  });
});
