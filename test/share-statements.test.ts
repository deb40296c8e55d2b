/**
 * The statements a customer's page sends (docs/customers.md, "Measured"), counted on each database
 * through the query observer every statement passes, as test/round-trips.test.ts counts W1 and W3:
 * a change that adds a round trip to the quote's share page or to the booking page fails here.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  DIALECTS,
  addUser,
  call,
  createTenant,
  createTestApp,
  skipUnless,
  type Tenant,
  type TestApp,
} from './helpers.js';

const PLACE = { lat: 51.5, lng: -0.12 };
const EVERY_DAY = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'].map((day) => ({
  day,
  start: '08:00',
  end: '18:00',
}));
const pathOf = (url: string) => new URL(url).pathname;

for (const dialect of DIALECTS) {
  describe(`statements of the share pages (${dialect})`, { skip: skipUnless(dialect) }, () => {
    let t: TestApp;
    let a: Tenant;
    let recording: string[] | undefined;
    let sharePath: string;
    let bookingPath: string;
    before(async () => {
      t = await createTestApp(dialect, {
        deliveries: false,
        env: { RATE_LIMIT_AUTH: '0' },
        observe: (_d, _s, _f, sql) => recording?.push(sql),
      });
      a = await createTenant(t);
      const ok = async (method: string, url: string, body?: unknown) => {
        const res = await call(t.app, a.token, method, url, body);
        assert.equal(res.status, 200, res.raw);
        return res.body;
      };
      const client = (await ok('POST', '/clients', { clients: [{ name: 'Ada Customer' }] })).clients[0].id;
      const job = (await ok('POST', '/jobs', { jobs: [{ title: 'Quoted job', client: { id: client } }] })).jobs[0].id;
      const quote = (
        await ok('POST', '/quotes', {
          quotes: [{ job: { id: job }, lines: [{ description: 'Boiler service', quantity: 1, unitPrice: 120.5 }] }],
        })
      ).quotes[0].id;
      await ok('POST', `/quotes/${quote}/send`);
      sharePath = pathOf((await ok('POST', `/quotes/${quote}/shareLink`)).quotes[0].shareUrl);
      const crew = await addUser(t, a, 'employee', { firstName: 'Sam', workingHours: EVERY_DAY, homeLocation: PLACE });
      // Leave in the account, as crews have: every table the slots read has a version (src/db/memo.ts).
      const day = new Date(Date.now() + 2 * 86_400_000).toISOString().slice(0, 10);
      await ok('POST', '/unavailabilities', {
        unavailabilities: [
          { user: { id: crew.id }, startTime: `${day}T13:00:00Z`, endTime: `${day}T18:00:00Z`, reason: 'leave' },
        ],
      });
      const bookable = (
        await ok('POST', '/jobs', { jobs: [{ title: 'Bookable', address: { line1: '1 Bench St', location: PLACE } }] })
      ).jobs[0].id;
      bookingPath = pathOf((await ok('POST', `/jobs/${bookable}/bookingLink`)).jobs[0].bookingUrl);
    });
    after(() => t?.close());

    /** The statements a page sends, opened once before (its viewedAt set, its slots remembered). */
    async function statementsOf(path: string) {
      assert.equal((await t.app.inject({ method: 'GET', url: path })).statusCode, 200);
      recording = [];
      const res = await t.app.inject({ method: 'GET', url: path });
      const sent = recording;
      recording = undefined;
      assert.equal(res.statusCode, 200, res.body);
      return { html: res.body, sent };
    }

    test('the share page of a sent quote: the link with its row, then the account with its client and job', async () => {
      const { html, sent } = await statementsOf(sharePath);
      assert.match(html, /Ada Customer/);
      assert.match(html, /Quoted job/);
      assert.equal(sent.length, 2, sent.join('\n'));
      assert.equal(sent.filter((s) => /from "quotes"/.test(s)).length, 1, sent.join('\n'));
      assert.equal(sent.filter((s) => /from "accounts"/.test(s)).length, 1, sent.join('\n'));
    });

    test('the booking page: its header (job title, company, zone) is one statement', async () => {
      const { html, sent } = await statementsOf(bookingPath);
      assert.match(html, /name="slot"/);
      assert.equal(sent.filter((s) => /^select "jobs"\."title"/.test(s)).length, 1, sent.join('\n'));
      assert.equal(sent.filter((s) => /^select "company_name" from "accounts"/.test(s)).length, 0, sent.join('\n'));
    });
  });
}
