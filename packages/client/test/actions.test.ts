import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { AuthorizationRevokedError, FieldService, FieldServiceError, type Tokens } from '@fieldservice/client';
import { authorizeWithInject, injectBrowser } from '../../../dist/test/helpers.js';
import { DIALECTS, registeredClient, serve, signedInClient, skipUnless, type Served } from './fixture.js';

/** The error a call threw, which must be a FieldServiceError. */
async function refusal(p: Promise<unknown>): Promise<FieldServiceError> {
  try {
    await p;
  } catch (e) {
    assert.ok(e instanceof FieldServiceError, `a FieldServiceError, not ${String(e)}`);
    return e;
  }
  assert.fail('the call succeeded');
}

for (const dialect of DIALECTS) {
  describe(
    `client package: typed inputs, actions, meta and revoked grants (${dialect})`,
    { skip: skipUnless(dialect) },
    () => {
      let s: Served;
      let fsm: FieldService;
      const requests: Request[] = [];

      before(async () => {
        s = await serve(dialect);
        fsm = await signedInClient(s, {
          fetch: (r) => {
            requests.push(r.clone());
            return fetch(r);
          },
        });
      });
      after(() => s?.close());

      test("issue 50's invoice compiles and is accepted: lines with their required members only", async () => {
        const client = await fsm.createOne('clients', { name: 'Acme' });
        const [invoice] = await fsm.create('invoices', [
          { client: { id: client.id }, lines: [{ description: 'Call-out', quantity: 1, unitPrice: 45 }] },
        ]);
        assert.equal(invoice.state, 'draft');
        assert.deepEqual(
          invoice.lines.map((l) => [l.description, l.taxRate, l.kind, l.subtotal, l.total]),
          [['Call-out', null, null, 45, 45]],
        );
        const job = await fsm.createOne('jobs', { title: 'Boiler', client: { id: client.id } });
        const quote = await fsm.createOne('quotes', {
          job: { id: job.id },
          lines: [{ description: 'New boiler', quantity: 1, unitPrice: 900 }],
        });
        assert.equal(quote.total, 900);
      });

      test('actions are methods that answer the item or throw FieldServiceError; meta carries ETag and the key', async () => {
        const client = await fsm.createOne('clients', { name: 'Bolt' });
        const draft = await fsm.createOne('invoices', {
          client: { id: client.id },
          lines: [{ description: 'Labour', quantity: 2, unitPrice: 60 }],
        });
        requests.length = 0;
        const issued = await fsm.invoices.issue(draft, { idempotencyKey: 'issue-once' });
        assert.equal(issued.id, draft.id);
        assert.equal(issued.state, 'issued');
        assert.match(issued.number ?? '', /^INV-\d{6}$/);
        assert.equal(requests[0].method, 'POST');
        assert.equal(new URL(requests[0].url).pathname, `/invoices/${draft.id}/issue`);
        assert.equal(issued.meta.status, 200);
        assert.equal(issued.meta.replayed, false);
        assert.equal(issued.meta.idempotencyKey, 'issue-once');
        // meta is not data: not enumerated, not serialized.
        assert.ok(!Object.keys(issued).includes('meta'));
        assert.ok(!('meta' in JSON.parse(JSON.stringify(issued))));

        // The same key again: the first answer, replayed, says so; nothing is done twice.
        const again = await fsm.invoices.issue(draft.id, { idempotencyKey: 'issue-once' });
        assert.equal(again.meta.replayed, true);
        assert.equal(again.number, issued.number);

        // A second issue with a new key: the state rule refuses it, thrown like a failed create.
        const twice = await refusal(fsm.invoices.issue(draft.id));
        assert.equal(twice.status, 422);
        assert.equal(twice.code, 1280);

        const pdf = await fsm.invoices.pdf(draft.id);
        assert.equal(typeof pdf.downloadUrl, 'string');
        assert.match(pdf.name, /\.pdf$/);
        const voided = await fsm.invoices.void(draft.id);
        assert.equal(voided.state, 'void');

        // Quotes: send, accept, invoice (the invoice answered is a draft of the quote's lines).
        const job = await fsm.createOne('jobs', { title: 'Boiler', client: { id: client.id } });
        const quote = await fsm.createOne('quotes', {
          job: { id: job.id },
          lines: [{ description: 'New boiler', quantity: 1, unitPrice: 900 }],
        });
        assert.equal((await fsm.quotes.send(quote)).state, 'sent');
        assert.equal((await fsm.quotes.accept(quote)).state, 'accepted');
        const fromQuote = await fsm.quotes.invoice(quote);
        assert.equal(fromQuote.state, 'draft');
        assert.deepEqual(
          fromQuote.lines.map((l) => l.description),
          ['New boiler'],
        );
        assert.equal((await refusal(fsm.quotes.decline(quote))).status, 422);

        // An action with input: a check-in's location goes in the envelope the server expects.
        const visit = await fsm.createOne('visits', {
          job: { id: job.id },
          label: 'Fit',
          startTime: new Date(Date.now() - 60_000).toISOString(),
          endTime: new Date(Date.now() + 3_600_000).toISOString(),
          user: { id: s.tenant.adminId },
        });
        requests.length = 0;
        const checkedIn = await fsm.visits.checkIn(visit.id, { location: { lat: 53.8, lng: -1.55 } });
        assert.deepEqual(await requests[0].json(), { visits: [{ location: { lat: 53.8, lng: -1.55 } }] });
        assert.equal(checkedIn.id, visit.id);
        assert.equal(checkedIn.state, 'onSite');
        const missing = await refusal(fsm.invoices.issue(999_999));
        assert.equal(missing.status, 404);
      });

      test('a view is a method: fsm.jobs.slots answers the slots, and a slot books as it came', async () => {
        const days = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'] as const;
        const place = { lat: 53.8, lng: -1.55 };
        const crew = await fsm.createOne('users', {
          account: { id: s.tenant.accountId },
          firstName: 'Slot',
          lastName: 'Crew',
          email: 'slot.crew@example.com',
          mobile: '+447700900555',
          workingHours: days.map((day) => ({ day, start: '09:00', end: '12:00' })),
          homeLocation: place,
        });
        const job = await fsm.createOne('jobs', {
          title: 'Bookable',
          address: { line1: '1 Mill Rd', location: place },
        });
        // 2031-03-03 is a Monday; windows start on the account's local hour, whatever its zone.
        const query = { from: '2031-03-03T00:00:00Z', to: '2031-03-05T00:00:00Z', duration: 60, window: 60 };
        requests.length = 0;
        const first = await fsm.jobs.slots(job, query);
        const sent = new URL(requests[0].url);
        assert.equal(sent.pathname, `/jobs/${job.id}/slots`);
        assert.equal(sent.searchParams.get('window'), '60');
        assert.equal('result' in first, false);
        const mine = first.slots.filter((x) => x.user.id === crew.id);
        assert.ok(mine.length >= 2, JSON.stringify(first));
        assert.equal(first.metadata.recordsCount, first.slots.length);
        const { arrivalWindowStart, arrivalWindowEnd, user } = mine[0];
        const slot = { arrivalWindowStart, arrivalWindowEnd, user, duration: 60 };
        const visit = await fsm.jobs.book(job, slot);
        assert.equal(visit.arrivalWindowStart, mine[0].arrivalWindowStart);
        const again = await fsm.jobs.slots(job.id, query);
        assert.ok(
          !again.slots.some((x) => x.user.id === crew.id && x.arrivalWindowStart === mine[0].arrivalWindowStart),
        );
        assert.equal((await refusal(fsm.jobs.book(job, slot))).status, 422);
        assert.equal(
          (await refusal(fsm.jobs.slots(job, { from: query.from, to: '2031-06-01T00:00:00Z' }))).status,
          400,
        );
      });

      test('fsm.jobs.bookingLink answers the job with its bookingUrl; fsm.jobs.unshare ends it', async () => {
        const job = await fsm.createOne('jobs', { title: 'Book me' });
        const linked = await fsm.jobs.bookingLink(job);
        assert.equal(linked.id, job.id);
        const url = (linked as typeof linked & { bookingUrl?: string }).bookingUrl ?? '';
        assert.match(url, /\/share\/jobs\/\d+\.[A-Za-z0-9_-]{43}$/);
        assert.equal((await fetch(url)).status, 200);
        const ended = await fsm.jobs.unshare(job.id);
        assert.equal(ended.id, job.id);
        assert.equal('bookingUrl' in ended, false);
        assert.equal((await fetch(url)).status, 404);
      });

      test('createOne and updateOne: one item, no array; updateOne answers meta.etag for the next If-Match', async () => {
        const job = await fsm.createOne('jobs', { title: 'Gutter' }, { idempotencyKey: 'gutter-1' });
        assert.equal(job.title, 'Gutter');
        assert.equal(job.meta.idempotencyKey, 'gutter-1');
        assert.equal(job.meta.replayed, false);
        const replayed = await fsm.createOne('jobs', { title: 'Gutter' }, { idempotencyKey: 'gutter-1' });
        assert.equal(replayed.id, job.id);
        assert.equal(replayed.meta.replayed, true);

        const { etag } = await fsm.get('jobs', job.id);
        const renamed = await fsm.updateOne('jobs', job, { title: 'Gutters' }, { ifMatch: etag });
        assert.equal(renamed.title, 'Gutters');
        assert.ok(renamed.meta.etag && renamed.meta.etag !== etag, 'a new ETag');
        const stale = await refusal(fsm.updateOne('jobs', job.id, { title: 'Gutter!' }, { ifMatch: etag }));
        assert.equal(stale.status, 412);
        const next = await fsm.updateOne('jobs', job.id, { title: 'Gutter!' }, { ifMatch: renamed.meta.etag });
        assert.equal(next.title, 'Gutter!');

        const batch = await fsm.update('jobs', [{ id: job.id, title: 'Gutter' }]);
        assert.equal(batch.length, 1);
        assert.equal(batch.meta.status, 200);
        assert.equal(batch.meta.etag, undefined, 'a batch names no single item');
      });

      test('a refresh refused with invalid_grant throws AuthorizationRevokedError and drops the tokens', async () => {
        const redirectUri = 'http://127.0.0.1:9/callback';
        const { clientId, clientSecret } = await registeredClient(s, redirectUri);
        const saved: (Tokens | undefined)[] = [];
        const app = await FieldService.discover({
          issuer: s.base,
          clientId,
          clientSecret,
          redirectUri,
          onTokens: (t) => void saved.push(t),
        });
        const { url, state, codeVerifier } = await app.authorizationUrl();
        const { location } = await authorizeWithInject(injectBrowser(s.t.app), Object.fromEntries(url.searchParams), {
          login: s.tenant.login,
          password: s.tenant.password,
        });
        const tokens = await app.signIn(location, { state, codeVerifier });
        assert.equal(typeof tokens.refreshToken, 'string');
        assert.equal((await fsm.createOne('jobs', { title: 'Visible' })).title, 'Visible');
        for await (const job of app.list('jobs', { fields: ['title'], recordsPerPage: 1 })) {
          assert.equal(typeof job.title, 'string');
          break;
        }

        // The grant ends behind the app's back (RFC 7009, as the owner's revocation does).
        const revoked = await fetch(`${s.base}/oauth2/revoke`, {
          method: 'POST',
          headers: {
            'content-type': 'application/x-www-form-urlencoded',
            authorization: `Basic ${Buffer.from(`${clientId}:${clientSecret}`).toString('base64')}`,
          },
          body: new URLSearchParams({ token: tokens.refreshToken!, token_type_hint: 'refresh_token' }),
        });
        assert.equal(revoked.status, 200);

        saved.length = 0;
        // The access token is refused (401); the refresh is refused too: a typed error, tokens gone.
        const err = await app.createOne('jobs', { title: 'Never' }).then(
          () => assert.fail('the call succeeded'),
          (e: unknown) => e,
        );
        assert.ok(err instanceof AuthorizationRevokedError, String(err));
        assert.equal(err.code, 'invalid_grant');
        assert.equal((err.cause as { error?: string }).error, 'invalid_grant');
        assert.deepEqual(saved, [undefined]);
        assert.equal(app.session.current, undefined);
        await assert.rejects(app.get('jobs', 1), /not signed in/);
      });
    },
  );
}
