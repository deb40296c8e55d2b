import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { DIALECTS, addUser, suiteWithTenants, call, errorsOf, skipUnless } from './helpers.js';
import { ERRORS, VALIDATION } from '../src/errors.js';

/**
 * Issue 50: the documents a business sends. Point 1: names in every script come back from the PDF
 * exactly as entered, in embedded subset fonts, and a one-line invoice stays small. Point 2: the
 * account's business members (POST /users/account, Administrators) and what an invoice or a quote
 * prints: the seller, the client's company and e-mail, the job, tax rates by name with a summary
 * per rate, payments, terms, bank details, page numbers, and the paper size.
 */

const code = (kind: keyof typeof VALIDATION, field: string) => `${VALIDATION[kind].code}:${field}`;

/** A small valid PNG (w × h, RGB, one colour), made here: no image file in the repository. */
function png(w: number, h: number): Buffer {
  const crcTable = Array.from({ length: 256 }, (_, n) => {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    return c >>> 0;
  });
  const crc = (b: Buffer) => {
    let c = 0xffffffff;
    for (const byte of b) c = crcTable[(c ^ byte) & 0xff] ^ (c >>> 8);
    return (c ^ 0xffffffff) >>> 0;
  };
  const chunk = (type: string, data: Buffer) => {
    const body = Buffer.concat([Buffer.from(type, 'ascii'), data]);
    const len = Buffer.alloc(4);
    len.writeUInt32BE(data.length);
    const sum = Buffer.alloc(4);
    sum.writeUInt32BE(crc(body));
    return Buffer.concat([len, body, sum]);
  };
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(w, 0);
  ihdr.writeUInt32BE(h, 4);
  ihdr[8] = 8; // bit depth
  ihdr[9] = 2; // RGB
  const row = Buffer.concat([Buffer.from([0]), Buffer.alloc(w * 3, 0x33)]);
  const raw = Buffer.concat(Array.from({ length: h }, () => row));
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', ihdr),
    chunk('IDAT', zlib.deflateSync(raw)),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

for (const dialect of DIALECTS) {
  describe(`documents a business sends (${dialect})`, { skip: skipUnless(dialect) }, () => {
    const { t, a, b } = suiteWithTenants(dialect);
    let dir: string;
    before(async () => {
      dir = fs.mkdtempSync(path.join(os.tmpdir(), 'fsm-documents-'));
    });
    after(() => fs.rmSync(dir, { recursive: true, force: true }));

    const post = (col: string, items: unknown[], token = a.token) =>
      call(t.app, token, 'POST', `/${col}`, { [col]: items });
    const setAccount = (account: unknown, token = a.token) => call(t.app, token, 'POST', '/users/account', { account });
    const upload = async (bytes: Buffer, name: string, type: string, token = a.token) => {
      const res = await t.app.inject({
        method: 'POST',
        url: `/files/upload?name=${encodeURIComponent(name)}`,
        payload: bytes,
        headers: { authorization: `Bearer ${token}`, 'x-version': '1.0', 'content-type': type },
      });
      assert.equal(res.statusCode, 200, res.body);
      return JSON.parse(res.body).files[0].id as number;
    };
    /** Renders a quote's or an invoice's PDF; answers its path on disk, its bytes and its text. */
    const pdf = async (collection: 'invoices' | 'quotes', id: number, token = a.token) => {
      const res = await call(t.app, token, 'POST', `/${collection}/${id}/pdf`);
      assert.equal(res.status, 200, res.raw);
      const url = new URL(res.body.files[0].downloadUrl);
      const dl = await t.app.inject({ method: 'GET', url: url.pathname + url.search });
      assert.equal(dl.statusCode, 200);
      const file = path.join(dir, `${collection}-${id}-${Date.now()}.pdf`);
      fs.writeFileSync(file, dl.rawPayload);
      if (process.env.FSM_PDF_KEEP) fs.copyFileSync(file, path.join(process.env.FSM_PDF_KEEP, path.basename(file)));
      const text = execFileSync('pdftotext', ['-layout', file, '-'], { encoding: 'utf8' });
      const raw = execFileSync('pdftotext', ['-raw', file, '-'], { encoding: 'utf8' });
      return { file, bytes: dl.rawPayload, text, raw };
    };
    const info = (file: string) => execFileSync('pdfinfo', [file], { encoding: 'utf8' });

    const NAMES = {
      latin: 'Zoë Łukasiewicz – Café Ärzte',
      polish: 'Łódź, ulica Żółkiewskiego 7',
      greek: 'Γιώργος Παπαδόπουλος',
      cyrillic: 'Светлана Ивановна Кузнецова',
      cjk: '東京都渋谷区 株式会社山田',
    };

    it('names in five scripts come back from the PDF exactly, in embedded subset fonts, and a one-line invoice is small', async () => {
      const client = (
        await post('clients', [
          {
            name: `${NAMES.latin} ${NAMES.cjk}`,
            companyName: NAMES.greek,
            address: { line1: NAMES.polish, city: 'Łódź', country: 'Polska' },
          },
        ])
      ).body.clients[0].id;
      const job = (await post('jobs', [{ title: NAMES.cyrillic, client: { id: client } }])).body.jobs[0].id;
      await post('charges', [{ job: { id: job }, kind: 'labour', description: NAMES.cjk, unitPrice: 10, quantity: 1 }]);
      const invoice = (await post('invoices', [{ job: { id: job }, notes: `${NAMES.cyrillic} ${NAMES.polish}` }])).body
        .invoices[0].id;
      const { file, bytes, raw } = await pdf('invoices', invoice);
      for (const [script, name] of Object.entries(NAMES))
        assert.ok(raw.includes(name), `${script} "${name}" in:\n${raw}`);
      assert.ok(bytes.length < 300 * 1024, `a one-line invoice is ${bytes.length} bytes`);
      const fonts = execFileSync('pdffonts', [file], { encoding: 'utf8' });
      const rows = fonts.split('\n').slice(2).filter(Boolean);
      assert.ok(rows.length >= 2, fonts);
      // Every font embedded as a subset (the ABCDEF+ prefix, emb and sub yes), none standard.
      for (const r of rows) {
        assert.match(r, /^[A-Z]{6}\+\S+\s.*\byes\s+yes\s+yes\b/, fonts);
        assert.doesNotMatch(r, /Helvetica/, fonts);
      }
      assert.ok(rows.some((r) => /NotoSans-/.test(r)) && rows.some((r) => /NotoSansJP/.test(r)), fonts);
    });

    it('the account members: Administrators write them, everyone reads them as account members, failures name the member', async () => {
      const employee = await addUser(t, a, 'employee');
      // Not an Administrator: 403; a Contractor has no write on users at all.
      const denied = await setAccount({ phone: '+15551234567' }, employee.token);
      assert.equal(denied.status, 403, denied.raw);
      assert.equal(denied.body.error.code, ERRORS.roleForbids.code);
      const contractor = await addUser(t, a, 'contractor');
      assert.equal((await setAccount({ phone: '+15551234567' }, contractor.token)).status, 403);
      // Failures name the member, nothing is written.
      const textFile = await upload(Buffer.from('not an image at all'), 'logo.png', 'image/png');
      const other = await upload(png(4, 4), 'b-logo.png', 'image/png', b.token);
      const bad = await setAccount({
        phone: '12345',
        email: 'nope',
        paperSize: 'A3',
        address: { line1: 'x', planet: 'Mars' },
        logo: { id: textFile },
        taxNumber: 'x'.repeat(51),
        currency: 'EUR',
        colour: 'red',
      });
      assert.equal(bad.status, 422, bad.raw);
      assert.deepEqual(
        errorsOf(bad).sort(),
        [
          code('invalid', 'account.email'),
          code('invalid', 'account.logo'),
          code('invalid', 'account.paperSize'),
          code('invalid', 'account.phone'),
          code('invalid', 'account.taxNumber'),
          code('readOnly', 'account.currency'),
          code('unknown', 'account.address.planet'),
          code('unknown', 'account.colour'),
        ].sort(),
      );
      assert.deepEqual(errorsOf(await setAccount({ logo: { id: other } })), [code('reference', 'account.logo')]);
      assert.deepEqual(errorsOf(await setAccount({ logo: 5 })), [code('association', 'account.logo')]);
      assert.deepEqual(errorsOf(await setAccount('x')), [code('invalid', 'account')]);
      assert.equal((await call(t.app, a.token, 'POST', '/users/account', {})).status, 422);
      const notJson = await call(t.app, a.token, 'POST', '/users/account', 'phone=1', { 'content-type': 'text/plain' });
      assert.equal(notJson.status, 415, notJson.raw);
      // A valid write: the members sent are set, the others kept.
      const logo = await upload(png(120, 40), 'logo.png', 'image/png');
      const ok = await setAccount({
        address: { line1: '1 Main Street', city: 'Springfield', region: 'IL', postcode: '62701', country: 'US' },
        phone: '+15551234567',
        email: 'office@example.com',
        taxNumber: 'EIN 12-3456789',
        logo: { id: logo },
      });
      assert.equal(ok.status, 200, ok.raw);
      assert.equal(ok.body.users[0].id, a.adminId);
      assert.deepEqual(ok.body.users[0].account.logo, { id: logo });
      await setAccount({ paymentTerms: 'Net 30', bankDetails: 'First Bank\nACH 123456789' });
      // Everyone reads them, with fields=*,[*] and by name.
      const read = await call(t.app, employee.token, 'GET', `/users/${employee.id}?fields=*,[*]`);
      assert.equal(read.status, 200, read.raw);
      const account = read.body.users[0].account;
      assert.deepEqual(account.address, {
        line1: '1 Main Street',
        city: 'Springfield',
        region: 'IL',
        postcode: '62701',
        country: 'US',
      });
      assert.equal(account.phone, '+15551234567');
      assert.equal(account.email, 'office@example.com');
      assert.equal(account.taxNumber, 'EIN 12-3456789');
      assert.equal(account.paymentTerms, 'Net 30');
      assert.equal(account.bankDetails, 'First Bank\nACH 123456789');
      assert.equal(account.paperSize, null);
      const named = await call(t.app, contractor.token, 'GET', `/users/${contractor.id}?fields=account.phone`);
      assert.equal(named.body.users[0].account.phone, '+15551234567');
      // Another account's members are its own.
      const theirs = await call(t.app, b.token, 'GET', `/users/${b.adminId}?fields=account.phone`);
      assert.equal(theirs.body.users[0].account.phone, null);
      // null clears one.
      await setAccount({ taxNumber: 'EIN 12-3456789', email: null });
      const cleared = await call(t.app, a.token, 'GET', `/users/${a.adminId}?fields=account.email,account.phone`);
      assert.equal(cleared.body.users[0].account.email, null);
      assert.equal(cleared.body.users[0].account.phone, '+15551234567');
      await setAccount({ email: 'office@example.com' });
    });

    it('an invoice prints the seller, client, job, tax per rate, payments, terms, bank details and Page i of N, on Letter in the US', async () => {
      const site = (
        await post('clients', [
          {
            name: 'Jane Customer',
            companyName: 'Customer Holdings LLC',
            email: 'jane@customer.example',
            address: { line1: '9 Billing Road', city: 'Chicago', country: 'US' },
          },
        ])
      ).body.clients[0].id;
      const job = (
        await post('jobs', [
          {
            title: 'Replace the boiler',
            reference: 'JOB-BOILER-1',
            orderNumber: 'PO-4711',
            client: { id: site },
            address: { line1: '22 Service Lane', city: 'Evanston', postcode: '60201', country: 'US' },
          },
        ])
      ).body.jobs[0].id;
      const rates = (
        await post('taxRates', [
          { name: 'State sales tax', percent: 6.25 },
          { name: 'Reduced', percent: 5 },
        ])
      ).body.taxRates.map((r: { id: number }) => r.id);
      const charges = await post('charges', [
        {
          job: { id: job },
          kind: 'labour',
          description: 'Labour',
          unitPrice: 100,
          quantity: 2,
          taxRate: { id: rates[0] },
        },
        {
          job: { id: job },
          kind: 'material',
          description: 'Valve',
          unitPrice: 40,
          quantity: 1,
          taxRate: { id: rates[1] },
        },
        {
          job: { id: job },
          kind: 'material',
          description: 'Pipe',
          unitPrice: 20,
          quantity: 1,
          taxRate: { id: rates[0] },
        },
        { job: { id: job }, kind: 'expense', description: 'Parking', unitPrice: 5, quantity: 1 },
      ]);
      assert.equal(charges.status, 200, charges.raw);
      const id = (await post('invoices', [{ job: { id: job } }])).body.invoices[0].id;
      assert.equal((await call(t.app, a.token, 'POST', `/invoices/${id}/issue`)).status, 200);
      const paid = await post('payments', [
        { invoice: { id }, amount: 50, method: 'bankTransfer', reference: 'WIRE-0001', paidAt: '2026-11-20T10:00:00Z' },
        { invoice: { id }, amount: 10.5, method: 'card', reference: 'AUTH-778', paidAt: '2026-11-21T10:00:00Z' },
      ]);
      assert.equal(paid.status, 200, paid.raw);
      const { file, text } = await pdf('invoices', id);
      for (const s of [
        // The seller.
        '1 Main Street',
        'Springfield IL 62701',
        'Phone: +15551234567',
        'E-mail: office@example.com',
        'Tax number: EIN 12-3456789',
        // The client.
        'Jane Customer',
        'Customer Holdings LLC',
        'jane@customer.example',
        '9 Billing Road',
        // The job and its service address.
        'JOB-BOILER-1: Replace the boiler',
        'PO number: PO-4711',
        'SERVICE ADDRESS',
        '22 Service Lane',
        'Evanston 60201',
        // Tax rates by name and percent, and the summary per rate: 6.25 % of 220 = 13.75, 5 % of 40 = 2.
        'State sales tax 6.25% on 220.00',
        'Reduced 5% on 40.00',
        'Tax total',
        '15.75 USD',
        '280.75 USD',
        // The payments: date, method, reference, amount.
        'PAYMENTS',
        'PAYMENT TERMS',
        'Net 30',
        'BANK DETAILS',
        'First Bank',
        'ACH 123456789',
        'Page 1 of 1',
      ])
        assert.ok(text.includes(s), `${s} in:\n${text}`);
      // Each line's tax by name and percent (a long name may wrap in its column).
      assert.match(text, /Labour\s+2\s+100\.00\s+State sales tax\s+6\.25%\s+200\.00/);
      assert.match(text, /Valve\s+1\s+40\.00\s+Reduced 5%\s+40\.00/);
      assert.match(text, /Parking\s+1\s+5\.00\s+-\s+5\.00/);
      assert.match(text, /2026-11-20\s+Bank transfer\s+WIRE-0001\s+50\.00 USD/);
      assert.match(text, /2026-11-21\s+Card\s+AUTH-778\s+10\.50 USD/);
      assert.match(text, /State sales tax 6\.25% on 220\.00\s+13\.75 USD/);
      assert.match(text, /Reduced 5% on 40\.00\s+2\.00 USD/);
      assert.match(text, /Balance due\s+220\.25 USD/);
      // The account's address is in the US: Letter.
      assert.match(info(file), /Page size:\s+612 x 792 pts \(letter\)/);
    });

    it('paper: A4 outside the US and Canada, Letter in Canada, or as set; a long invoice flows over pages with its heading repeated', async () => {
      const client = (await post('clients', [{ name: 'Long Client' }])).body.clients[0].id;
      const job = (await post('jobs', [{ title: 'Big job', client: { id: client } }])).body.jobs[0].id;
      const lines = Array.from({ length: 120 }, (_, i) => ({
        description: `Item ${i + 1}${i % 9 === 0 ? ' with a description long enough to wrap onto a second line of the description column' : ''}`,
        quantity: 1,
        unitPrice: 1,
      }));
      const id = (await post('invoices', [{ job: { id: job }, lines }])).body.invoices[0].id;
      await setAccount({ address: { line1: 'Hauptstraße 1', city: 'Berlin', country: 'Germany' } });
      const long = await pdf('invoices', id);
      assert.match(info(long.file), /Page size:\s+595\.28 x 841\.89 pts \(A4\)/);
      const pages = Number(/Pages:\s+(\d+)/.exec(info(long.file))![1]);
      assert.ok(pages >= 3, `${pages} pages`);
      for (let p = 1; p <= pages; p++) assert.ok(long.text.includes(`Page ${p} of ${pages}`), long.text);
      // The table heading on every page the lines reach (pdftotext ends each page with a form feed), each line once.
      const byPage = long.text.split('\f').filter((p) => p.trim());
      assert.equal(byPage.length, pages);
      for (const [i, page] of byPage.entries())
        if (/Item \d+/.test(page))
          assert.match(page, /Description\s+Qty\s+Unit price\s+Tax\s+Amount \(USD\)/, `page ${i + 1}`);
      assert.ok(byPage.filter((p) => /Item \d+/.test(p)).length >= 2);
      for (const n of [1, 60, 120]) assert.equal(long.text.match(new RegExp(`Item ${n}\\b`, 'g'))?.length, 1);
      await setAccount({ address: { city: 'Toronto', country: 'Canada' } });
      assert.match(info((await pdf('invoices', id)).file), /\(letter\)/);
      await setAccount({ paperSize: 'A4' });
      assert.match(info((await pdf('invoices', id)).file), /\(A4\)/);
      await setAccount({ paperSize: null, address: { country: 'US' } });
    });

    it('a description and notes longer than a page flow over pages; the table goes on below them', async () => {
      const client = (await post('clients', [{ name: 'Wordy Client' }])).body.clients[0].id;
      const job = (await post('jobs', [{ title: 'Wordy job', client: { id: client } }])).body.jobs[0].id;
      const words = (tag: string) =>
        Array.from({ length: 1200 }, (_, i) => `${tag}${i} Łódź 東京`)
          .join(' ')
          .slice(0, 10_000);
      const id = (
        await post('invoices', [
          {
            job: { id: job },
            notes: words('note'),
            lines: [
              { description: 'First line', quantity: 1, unitPrice: 1 },
              { description: words('desc'), quantity: 1, unitPrice: 2 },
              { description: 'Last line', quantity: 1, unitPrice: 3 },
            ],
          },
        ])
      ).body.invoices[0];
      assert.ok(id.id, JSON.stringify(id));
      const { file, text, raw } = await pdf('invoices', id.id);
      const pages = Number(/Pages:\s+(\d+)/.exec(info(file))![1]);
      assert.ok(pages >= 4, `${pages} pages`);
      for (let p = 1; p <= pages; p++) assert.ok(text.includes(`Page ${p} of ${pages}`), `Page ${p} of ${pages}`);
      // Every word of both, once, in order; the last line and the totals after the long one.
      const flat = raw.replace(/\s+/g, ' ');
      for (const w of ['desc0 ', 'desc400 ', 'note0 ', 'note400 ']) assert.equal(flat.split(w).length, 2, w);
      assert.ok(flat.indexOf('desc0 ') < flat.indexOf('Last line'));
      assert.ok(flat.indexOf('Last line') < flat.indexOf('Total 6.00 USD'), flat.slice(-2000));
      assert.ok(flat.indexOf('Total 6.00 USD') < flat.indexOf('note0 '));
    });

    it('a quote prints the seller, the job and tax by name, without payments or bank details', async () => {
      const client = (await post('clients', [{ name: 'Quote Client', email: 'q@client.example' }])).body.clients[0].id;
      const job = (await post('jobs', [{ title: 'Quoted job', orderNumber: 'PO-Q1', client: { id: client } }])).body
        .jobs[0].id;
      const rate = (await post('taxRates', [{ name: 'GST', percent: 10 }])).body.taxRates[0].id;
      const q = (
        await post('quotes', [
          { job: { id: job }, lines: [{ description: 'Survey', quantity: 1, unitPrice: 300, taxRate: { id: rate } }] },
        ])
      ).body.quotes[0];
      const { text } = await pdf('quotes', q.id);
      for (const s of [
        'QUOTE',
        q.number,
        'Tax number: EIN 12-3456789',
        'q@client.example',
        'PO number: PO-Q1',
        'GST 10%',
        'GST 10% on 300.00',
        '330.00 USD',
        'Page 1 of 1',
      ])
        assert.ok(text.includes(s), `${s} in:\n${text}`);
      assert.ok(!text.includes('BANK DETAILS') && !text.includes('PAYMENTS'), text);
    });
  });
}
