import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { ERRORS } from '../src/errors.js';
import { DIALECTS, skipUnless } from './helpers.js';
import { until } from './receiver.js';
import { createSite, request, startServer } from './reliability/process.js';

/**
 * Bookings racing across processes (PRODUCT §15): the real server with WORKERS=2 (two processes on
 * one SQLite file, or one PostgreSQL database). Every slot of a day is booked by five requests at
 * once: for each slot exactly one booking is written, every other answer is the clean 422 (1280)
 * and wrote nothing, and no two of the user's visits overlap.
 */
const SLOTS = 5;
const TRIES = 5;
const DATE = '2031-03-03';

for (const dialect of DIALECTS) {
  describe(`bookings with WORKERS=2 (${dialect})`, { skip: skipUnless(dialect) }, () => {
    test('of bookings racing for one slot on two processes, exactly one is written', async () => {
      const site = await createSite(dialect, { WORKERS: '2' });
      const server = await startServer(site.env);
      try {
        await until(() => (server.output().match(/listening on .*\(worker \d+\)/g) ?? []).length === 2, 15_000);
        const api = async (method: string, path: string, body?: unknown) => {
          const res = await request(server.origin, site.token, method, path, body);
          assert.equal(res.status, 200, `${method} ${path}: ${JSON.stringify(res.body)}`);
          return res.body;
        };
        const place = { lat: 51.5, lng: -0.12 };
        const days = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'];
        const user = (
          await api('POST', '/users', {
            users: [
              {
                account: { id: site.accountId },
                firstName: 'Crew',
                lastName: 'One',
                email: 'crew.one@example.com',
                mobile: '+447700900123',
                isAssignable: true,
                workingHours: days.map((day) => ({ day, start: '00:00', end: '23:59' })),
                homeLocation: place,
              },
            ],
          })
        ).users[0].id as number;
        const job = (
          await api('POST', '/jobs', { jobs: [{ title: 'Boiler', address: { line1: '1 High St', location: place } }] })
        ).jobs[0].id as number;
        const at = (h: number) => `${DATE}T${String(h).padStart(2, '0')}:00:00Z`;
        const window = (hour: number) => ({
          arrivalWindowStart: at(hour),
          arrivalWindowEnd: at(hour + 1),
          user: { id: user },
          duration: 60,
        });
        // Slots three hours apart (a window and its visit span two): all of them offered at first.
        const hours = Array.from({ length: SLOTS }, (_, k) => 6 + 3 * k);
        const attempts = hours.flatMap((hour) => Array.from({ length: TRIES }, () => ({ hour, slot: window(hour) })));
        const answers = await Promise.all(
          attempts.map(async (x) => ({
            ...x,
            res: await request(server.origin, site.token, 'POST', `/jobs/${job}/book`, { slots: [x.slot] }),
          })),
        );
        const unclean = answers.find(
          (x) =>
            !(x.res.status === 200 || (x.res.status === 422 && x.res.body.error.code === ERRORS.stateForbids.code)),
        );
        assert.equal(unclean, undefined, JSON.stringify(unclean?.res.body));
        for (const hour of hours) {
          const won = answers.filter((x) => x.hour === hour && x.res.status === 200);
          assert.equal(won.length, 1, `slot at ${hour}:00: ${won.length} bookings written`);
        }
        const visits = (
          await api('GET', `/visits?recordsPerPage=100&sort=startTime&where=${encodeURIComponent(`user.id = ${user}`)}`)
        ).visits as { id: number; startTime: string; endTime: string }[];
        assert.equal(visits.length, SLOTS);
        assert.deepEqual(
          visits.map((v) => v.id).sort((p, q) => p - q),
          answers
            .filter((x) => x.res.status === 200)
            .map((x) => x.res.body.visits[0].id as number)
            .sort((p, q) => p - q),
        );
        for (let i = 1; i < visits.length; i++)
          assert.ok(visits[i].startTime >= visits[i - 1].endTime, `visits ${i - 1} and ${i} overlap`);
      } finally {
        server.child.kill('SIGTERM');
        await server.exited;
        await site.close();
      }
    });
  });
}
