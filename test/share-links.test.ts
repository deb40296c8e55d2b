import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import {
  DIALECTS,
  suiteWithTenants,
  canonicalByHand,
  call,
  createTestApp,
  createTenant,
  skipUnless,
  type Tenant,
  type TestApp,
} from './helpers.js';
import { redactUrl, loggerOptions } from '../src/http/logging.js';

export const PNG =
  'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==';

const form = (fields: Record<string, string>) => new URLSearchParams(fields).toString();

/** A sent quote with two lines, of a job of a client. */
export async function sentQuote(t: TestApp, a: Tenant, notes = 'Thanks') {
  const post = async (col: string, item: unknown) => {
    const res = await call(t.app, a.token, 'POST', `/${col}`, { [col]: [item] });
    assert.equal(res.status, 200, res.raw);
    return res.body[col][0];
  };
  const client = await post('clients', { name: 'Jane Customer', email: 'jane@customer.example' });
  const job = await post('jobs', { title: 'Boiler service', client: { id: client.id } });
  const quote = await post('quotes', {
    job: { id: job.id },
    notes,
    lines: [
      { description: 'Boiler service', quantity: 1, unitPrice: 120.5 },
      { description: 'Valve <b>&</b>', quantity: 2, unitPrice: 9.99 },
    ],
  });
  assert.equal((await call(t.app, a.token, 'POST', `/quotes/${quote.id}/send`)).status, 200);
  return { client, job, quote };
}

const pathOf = (url: string) => new URL(url).pathname;

for (const dialect of DIALECTS) {
  describe(`share links (${dialect})`, { skip: skipUnless(dialect) }, () => {
    const { t, a, b } = suiteWithTenants(dialect, { env: { RATE_LIMIT_AUTH: '0' } });
    const open = (path: string, method = 'GET', payload?: string, headers: Record<string, string> = {}) =>
      t.app.inject({
        method: method as 'GET',
        url: path,
        payload,
        headers: payload === undefined ? headers : { 'content-type': 'application/x-www-form-urlencoded', ...headers },
      });
    const quoteOf = async (id: number) => (await call(t.app, a.token, 'GET', `/quotes/${id}?fields=*`)).body.quotes[0];
    const hidden = (html: string, name: string) => new RegExp(`name="${name}" value="([^"]*)"`).exec(html)?.[1] ?? '';

    it('a share link is shown once, stored only as its hash, and serves the page with no token', async () => {
      const { quote } = await sentQuote(t, a);
      const res = await call(t.app, a.token, 'POST', `/quotes/${quote.id}/shareLink`);
      assert.equal(res.status, 200, res.raw);
      const url: string = res.body.quotes[0].shareUrl;
      assert.match(url, /^http:\/\/127\.0\.0\.1:0\/share\/quotes\/\d+\.[A-Za-z0-9_-]{43}$/);
      const token = url.split('/').pop()!;
      assert.equal((await quoteOf(quote.id)).shareUrl, undefined, 'shown only once');
      const row = await t.database.db
        .selectFrom('quotes')
        .selectAll()
        .where('id', '=', quote.id)
        .executeTakeFirstOrThrow();
      assert.equal(row.share_token_hash, crypto.createHash('sha256').update(token).digest('hex'));
      assert.ok(!JSON.stringify(row).includes(token.split('.')[1]), 'the token itself is nowhere in the row');
      const page = await open(pathOf(url));
      assert.equal(page.statusCode, 200, page.body);
      assert.match(String(page.headers['content-type']), /^text\/html/);
      assert.match(String(page.headers['content-security-policy']), /frame-ancestors 'none'/);
      assert.match(String(page.headers['content-security-policy']), /script-src 'sha256-/);
      assert.equal(page.headers['x-frame-options'], 'DENY');
      assert.equal(page.headers['referrer-policy'], 'no-referrer');
      assert.match(String(page.headers['cache-control']), /no-store/);
      const html = page.body;
      for (const text of ['Alpha', quote.number, 'Jane Customer', 'Boiler service', 'Valve &lt;b&gt;&amp;&lt;/b&gt;'])
        assert.ok(html.includes(text), text);
      assert.ok(!html.includes('<b>&</b>'), 'escaped');
      // Amounts with the currency's decimals: 120.50 + 2 × 9.99 = 140.48.
      for (const text of ['120.50 USD', '9.99 USD', '19.98 USD', '140.48 USD']) assert.ok(html.includes(text), text);
      assert.ok(html.includes(`href="${pathOf(url)}/pdf"`));
      for (const sel of [
        'name="signerName"',
        'id="signature"',
        'name="signature"',
        'name="decision" value="accept"',
        'name="reason"',
        'name="decision" value="decline"',
      ])
        assert.ok(html.includes(sel), sel);
      const pdf = await open(`${pathOf(url)}/pdf`);
      assert.equal(pdf.statusCode, 200);
      assert.equal(pdf.headers['content-type'], 'application/pdf');
      assert.equal(pdf.rawPayload.subarray(0, 5).toString(), '%PDF-');
      // Another account's items are not reachable with this account's token format.
      const forged = `${b.accountId}.${token.split('.')[1]}`;
      assert.equal((await open(`/share/quotes/${forged}`)).statusCode, 404);
    });

    it('viewedAt is set by the first opening only, an event with actor null', async () => {
      const { quote } = await sentQuote(t, a);
      const url = pathOf((await call(t.app, a.token, 'POST', `/quotes/${quote.id}/shareLink`)).body.quotes[0].shareUrl);
      assert.equal((await quoteOf(quote.id)).viewedAt, null);
      await open(url);
      const first = (await quoteOf(quote.id)).viewedAt;
      assert.ok(first);
      t.clock.now += 5000;
      await open(url);
      assert.equal((await quoteOf(quote.id)).viewedAt, first);
      const events = (
        await call(
          t.app,
          a.token,
          'GET',
          `/events?where=collection='quotes' and item.id=${quote.id} and type='quotes.updated'`,
        )
      ).body.events;
      const viewed = events.filter((e: { changes: Record<string, unknown> }) => e.changes.viewedAt);
      assert.equal(viewed.length, 1);
      assert.equal(viewed[0].actor, null);
    });

    it('accepting: CSRF bound to the link, a PNG signature, 409 after a change, acceptance with documentSha256', async () => {
      const { quote, job } = await sentQuote(t, a);
      const url = pathOf((await call(t.app, a.token, 'POST', `/quotes/${quote.id}/shareLink`)).body.quotes[0].shareUrl);
      let html = (await open(url)).body;
      const fields = {
        csrf: hidden(html, 'csrf'),
        version: hidden(html, 'version'),
        signerName: 'Jane Customer',
        signature: PNG,
        decision: 'accept',
      };
      // Without the token, or with another link's: 403, nothing changed.
      assert.equal((await open(url, 'POST', form({ ...fields, csrf: '' }))).statusCode, 403);
      assert.equal((await open(url, 'POST', form({ ...fields, csrf: 'x'.repeat(43) }))).statusCode, 403);
      // A signature that is no PNG, or over 1 MiB: refused on the page, nothing changed.
      const bad = [
        'data:image/jpeg;base64,/9j/4AAQSkZJRgABAQ==',
        'data:image/png;base64,' + Buffer.from('GIF89a not a png at all, really not').toString('base64'),
        'data:image/png;base64,' +
          Buffer.concat([Buffer.from(PNG.split(',')[1], 'base64'), Buffer.alloc(1024 * 1024)]).toString('base64'),
        'javascript:alert(1)',
        '',
      ];
      for (const signature of bad) {
        const res = await open(url, 'POST', form({ ...fields, signature }));
        assert.equal(res.statusCode, 422, signature.slice(0, 30));
        assert.match(res.body, /class="error"/);
      }
      assert.equal((await open(url, 'POST', form({ ...fields, signerName: '  ' }))).statusCode, 422);
      const files = async () =>
        (await call(t.app, a.token, 'GET', `/files?where=job.id=${job.id}&fields=mimeType,name`)).body.files;
      assert.equal((await files()).length, 0);
      assert.equal((await quoteOf(quote.id)).state, 'sent');
      // The quote changes (its notes) after the page was opened: 409, reload.
      assert.equal(
        (await call(t.app, a.token, 'PATCH', `/quotes/${quote.id}`, { quotes: [{ notes: 'Changed' }] })).status,
        200,
      );
      const stale = await open(url, 'POST', form(fields));
      assert.equal(stale.statusCode, 409);
      assert.match(stale.body, /Reload/);
      html = (await open(url)).body;
      const fresh = { ...fields, version: hidden(html, 'version') };
      const shown = await quoteOf(quote.id);
      const done = await open(url, 'POST', form(fresh), { 'user-agent': 'TestBrowser/1.0' });
      assert.equal(done.statusCode, 303, /class="error"[^<]*</.exec(done.body)?.[0] ?? done.body);
      const accepted = await quoteOf(quote.id);
      assert.equal(accepted.state, 'accepted');
      const expected = crypto
        .createHash('sha256')
        .update(
          canonicalByHand({
            lines: shown.lines,
            subtotal: shown.subtotal,
            taxTotal: shown.taxTotal,
            total: shown.total,
          }),
        )
        .digest('hex');
      assert.equal(accepted.acceptance.documentSha256, expected);
      assert.equal(accepted.acceptance.signerName, 'Jane Customer');
      assert.equal(accepted.acceptance.userAgent, 'TestBrowser/1.0');
      assert.equal(accepted.acceptance.ip, '127.0.0.1');
      assert.ok(Date.parse(accepted.acceptance.at));
      const [file] = await files();
      assert.equal(file.id, accepted.acceptance.signature.id);
      assert.equal(file.mimeType, 'image/png');
      // The same form again: the quote is no longer sent.
      assert.equal((await open(url, 'POST', form(fresh))).statusCode, 409);
      const after = (await open(url)).body;
      assert.match(after, /is accepted/);
      assert.ok(!after.includes('name="decision"'), 'no form once decided');
      const events = (
        await call(
          t.app,
          a.token,
          'GET',
          `/events?where=collection='quotes' and item.id=${quote.id} and type='quotes.updated'`,
        )
      ).body.events;
      const decided = events.find(
        (e: { changes: Record<string, { new: unknown }> }) => e.changes.state?.new === 'accepted',
      );
      assert.equal(decided.actor, null);
    });

    it('declining with a reason; a decline needs no signature', async () => {
      const { quote } = await sentQuote(t, a);
      const url = pathOf((await call(t.app, a.token, 'POST', `/quotes/${quote.id}/shareLink`)).body.quotes[0].shareUrl);
      const html = (await open(url)).body;
      const res = await open(
        url,
        'POST',
        form({ csrf: hidden(html, 'csrf'), version: hidden(html, 'version'), decision: 'decline', reason: 'Too dear' }),
      );
      assert.equal(res.statusCode, 303);
      const q = await quoteOf(quote.id);
      assert.equal(q.state, 'declined');
      assert.equal(q.declineReason, 'Too dear');
      assert.equal(q.acceptance, null);
    });

    it('POST /quotes/:id/email and /invoices/:id/email queue a message with a fresh link to the client', async () => {
      const { quote, client, job } = await sentQuote(t, a);
      const old = pathOf((await call(t.app, a.token, 'POST', `/quotes/${quote.id}/shareLink`)).body.quotes[0].shareUrl);
      const res = await call(t.app, a.token, 'POST', `/quotes/${quote.id}/email`);
      assert.equal(res.status, 200, res.raw);
      const [m] = res.body.messages;
      assert.equal(m.to, 'jane@customer.example');
      assert.equal(m.state, 'queued', 'no SMTP_URL: it stays queued');
      assert.deepEqual([m.quote, m.client, m.job], [{ id: quote.id }, { id: client.id }, { id: job.id }]);
      assert.match(m.subject, new RegExp(`Quote ${quote.number} from Alpha`));
      const link = /http:\/\/\S+\/share\/quotes\/\S+/.exec(m.text)![0];
      assert.equal((await open(pathOf(link))).statusCode, 200);
      assert.equal((await open(old)).statusCode, 404, 'the new link replaces the old');
      assert.ok(m.text.includes('140.48 USD'));
      // A draft quote: 1280. A client without an address: its primary contact's, else 422.
      const bare = (await call(t.app, a.token, 'POST', '/clients', { clients: [{ name: 'No Address' }] })).body
        .clients[0];
      const job2 = (await call(t.app, a.token, 'POST', '/jobs', { jobs: [{ title: 'J', client: { id: bare.id } }] }))
        .body.jobs[0];
      const draft = (
        await call(t.app, a.token, 'POST', '/quotes', {
          quotes: [{ job: { id: job2.id }, lines: [{ description: 'X', quantity: 1, unitPrice: 1 }] }],
        })
      ).body.quotes[0];
      const refused = await call(t.app, a.token, 'POST', `/quotes/${draft.id}/email`);
      assert.equal(refused.status, 422, `${refused.raw} ${JSON.stringify(draft)}`);
      assert.equal(refused.body.error?.code ?? refused.body.errors?.[0]?.code, 1280, refused.raw);
      await call(t.app, a.token, 'POST', `/quotes/${draft.id}/send`);
      const none = await call(t.app, a.token, 'POST', `/quotes/${draft.id}/email`);
      assert.equal(none.status, 422, none.raw);
      await call(t.app, a.token, 'POST', '/contacts', {
        contacts: [
          { client: { id: bare.id }, firstName: 'P', lastName: 'C', email: 'primary@contact.example', isPrimary: true },
        ],
      });
      const viaContact = await call(t.app, a.token, 'POST', `/quotes/${draft.id}/email`);
      assert.equal(viaContact.status, 200, viaContact.raw);
      assert.equal(viaContact.body.messages[0].to, 'primary@contact.example');
      // An invoice: issued or paid only.
      const inv = (
        await call(t.app, a.token, 'POST', '/invoices', {
          invoices: [
            {
              job: { id: job.id },
              client: { id: client.id },
              lines: [{ description: 'W', quantity: 1, unitPrice: 5 }],
            },
          ],
        })
      ).body.invoices[0];
      assert.equal((await call(t.app, a.token, 'POST', `/invoices/${inv.id}/email`)).status, 422);
      await call(t.app, a.token, 'POST', `/invoices/${inv.id}/issue`);
      const sent = await call(t.app, a.token, 'POST', `/invoices/${inv.id}/email`);
      assert.equal(sent.status, 200, sent.raw);
      assert.deepEqual(sent.body.messages[0].invoice, { id: inv.id });
      assert.equal((await call(t.app, b.token, 'POST', `/invoices/${inv.id}/email`)).status, 404);
    });

    it('replaced, unshared, expired, void and malformed links answer 404; the token is never logged', async () => {
      const { quote, job, client } = await sentQuote(t, a);
      const share = async () =>
        pathOf((await call(t.app, a.token, 'POST', `/quotes/${quote.id}/shareLink`)).body.quotes[0].shareUrl);
      const first = await share();
      const second = await share();
      assert.equal((await open(first)).statusCode, 404, 'replaced');
      assert.match((await open(first)).body, /not valid/);
      assert.equal((await open(second)).statusCode, 200);
      assert.equal((await call(t.app, a.token, 'POST', `/quotes/${quote.id}/unshare`)).status, 200);
      assert.equal((await open(second)).statusCode, 404, 'unshared');
      const third = await share();
      t.clock.now += 61 * 86_400_000;
      assert.equal((await open(third)).statusCode, 404, 'expired after 60 days');
      t.clock.now -= 61 * 86_400_000;
      // An invoice: shared while issued, ended by voiding.
      const inv = (
        await call(t.app, a.token, 'POST', '/invoices', {
          invoices: [
            {
              job: { id: job.id },
              client: { id: client.id },
              lines: [{ description: 'Work', quantity: 1, unitPrice: 50 }],
            },
          ],
        })
      ).body.invoices[0];
      assert.equal((await call(t.app, a.token, 'POST', `/invoices/${inv.id}/issue`)).status, 200);
      const invUrl = pathOf(
        (await call(t.app, a.token, 'POST', `/invoices/${inv.id}/shareLink`)).body.invoices[0].shareUrl,
      );
      const invPage = await open(invUrl);
      assert.equal(invPage.statusCode, 200);
      assert.ok(invPage.body.includes('50.00 USD'));
      assert.ok(!invPage.body.includes('name="decision"'));
      assert.equal((await open(invUrl, 'POST', 'x=1')).statusCode, 404, 'an invoice takes no form');
      assert.equal((await call(t.app, a.token, 'POST', `/invoices/${inv.id}/void`)).status, 200);
      assert.equal((await open(invUrl)).statusCode, 404, 'void');
      assert.equal((await call(t.app, a.token, 'POST', `/invoices/${inv.id}/shareLink`)).status, 422);
      for (const p of ['/share/quotes/1.short', '/share/quotes/', '/share/jobs/1.abc', `${second}x`, `${second}/pdf/x`])
        assert.equal((await open(p)).statusCode, 404, `${p} ${(await open(p)).body.slice(0, 300)}`);
      const bad = await open(`/share/quotes/%ZZ${second.split('/').pop()}`);
      assert.equal(bad.statusCode, 400);
      assert.ok(!bad.body.includes(second.split('.')[1]));
      // Contractors may not make links; another account's quote is not found.
      assert.equal((await call(t.app, b.token, 'POST', `/quotes/${quote.id}/shareLink`)).status, 404);
      // Log lines name the path without the token.
      const token = third.split('/').pop()!;
      assert.equal(redactUrl(third), '/share/quotes/[token]');
      assert.equal(redactUrl(`${third}/pdf?x=1`), '/share/quotes/[token]/pdf');
      const req = loggerOptions('info').serializers.req({ method: 'GET', url: third });
      assert.ok(!JSON.stringify(req).includes(token));
    });
  });

  describe(`share pages are rate-limited per address (${dialect})`, { skip: skipUnless(dialect) }, () => {
    it('past RATE_LIMIT_AUTH a page answers 429 with Retry-After', async () => {
      const t = await createTestApp(dialect, { env: { RATE_LIMIT_AUTH: '3' } });
      try {
        await createTenant(t);
        const codes: number[] = [];
        for (let i = 0; i < 5; i++)
          codes.push((await t.app.inject({ method: 'GET', url: '/share/quotes/1.x' })).statusCode);
        assert.deepEqual(codes, [404, 404, 404, 429, 429]);
        const res = await t.app.inject({ method: 'GET', url: '/share/quotes/1.x' });
        assert.ok(res.headers['retry-after']);
        assert.match(String(res.headers['content-type']), /^text\/html/);
      } finally {
        await t.close();
      }
    });
  });
}
