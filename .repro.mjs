import { createTestApp, createTenant } from './dist/test/helpers.js';
const t = await createTestApp('sqlite');
t.config.rateLimitApi = 0;
const a = await createTenant(t);
for (const n of [400, 5000, 20000, 100000]) {
  for (const payload of [`{"users":[{"firstName":${'{"a":'.repeat(n)}1${'}'.repeat(n)}}]}`, `{"users":[{"firstName":${'['.repeat(n)}${']'.repeat(n)}}]}`, `{"users":[{"zzz":${'['.repeat(n)}${']'.repeat(n)}}]}`]) {
    const r = await t.app.inject({ method: 'POST', url: '/users', headers: { authorization: `Bearer ${a.token}`, 'x-version': '1.0', 'content-type': 'application/json' }, payload });
    console.log(n, r.statusCode, r.body.slice(0, 150));
  }
}
await t.close();
