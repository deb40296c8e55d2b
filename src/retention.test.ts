import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { DIALECTS, call, suiteWithTenants, skipUnless } from '../test/helpers.js';
import { until } from '../test/receiver.js';
import { startRetention } from './retention.js';

const DAY = 86_400_000;

/** The hourly purges (PRODUCT §6 events' retention, §11 location pings'), as the app starts them at ready. */
for (const dialect of DIALECTS) {
  describe(`retention (${dialect})`, { skip: skipUnless(dialect) }, () => {
    // No worker of its own: the test runs the purges with the clocks it chooses.
    const { t, a, b } = suiteWithTenants(dialect, { deliveries: false });
    const count = async (table: 'events' | 'locations') =>
      Number(
        (
          await t.database.db
            .selectFrom(table)
            .select((eb) => eb.fn.countAll().as('n'))
            .executeTakeFirstOrThrow()
        ).n,
      );
    const counts = async () => ({ events: await count('events'), locations: await count('locations') });

    it('purges events and location pings past their retention, in every account, at start; newer ones stay', async () => {
      const { eventsRetentionDays, locationsRetentionDays } = t.app.services.config;
      for (const tenant of [a, b]) {
        assert.equal((await call(t.app, tenant.token, 'POST', '/jobs', { jobs: [{ title: 'old work' }] })).status, 200);
        const ping = { lat: 1, lng: 2, recordedAt: new Date(t.clock.now - DAY).toISOString() };
        assert.equal((await call(t.app, tenant.token, 'POST', '/locations', { locations: [ping] })).status, 200);
      }
      const before = await counts();
      assert.ok(before.events >= 4 && before.locations === 2, JSON.stringify(before));

      // Nothing is past its retention yet: a pass takes nothing.
      const early = startRetention(t.app.services, () => t.clock.now);
      await new Promise((r) => setTimeout(r, 300));
      await early.stop();
      assert.deepEqual(await counts(), before);

      // Past both retentions.
      const later = t.clock.now + (Math.max(eventsRetentionDays, locationsRetentionDays) + 2) * DAY;
      const retention = startRetention(t.app.services, () => later);
      await until(async () => (await counts()).locations === 0 && (await counts()).events === 0, 10_000, 'the purge');
      await retention.stop();
      for (const tenant of [a, b])
        assert.equal((await call(t.app, tenant.token, 'GET', '/events')).body.events.length, 0);
    });
  });
}
