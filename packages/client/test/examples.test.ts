import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';
import { after, before, describe, test } from 'node:test';
import type { FieldService } from '@fieldservice/client';
import { DIALECTS, serve, signedInClient, skipUnless, type Served } from './fixture.js';

// examples/sync.ts, compiled by the build (tsconfig.examples.json) beside the tests.
const SYNC = fileURLToPath(new URL('./examples/sync.js', import.meta.url));
const run = promisify(execFile);

for (const dialect of DIALECTS) {
  describe(`client package: examples/sync.ts against a live server (${dialect})`, { skip: skipUnless(dialect) }, () => {
    let s: Served;
    let fsm: FieldService;
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'fsm-sync-'));
    const stateFile = path.join(dir, 'state.json');
    const bankFile = path.join(dir, 'bank.json');

    before(async () => {
      s = await serve(dialect);
      fsm = await signedInClient(s);
    });
    after(async () => {
      await s?.close();
      fs.rmSync(dir, { recursive: true, force: true });
    });

    // The program in its own process (the server answers in this one: never spawnSync here).
    const sync = async () => {
      const env = {
        ...process.env,
        FSM_URL: s.base,
        CLIENT_ID: s.tenant.clientId,
        CLIENT_SECRET: 'unused', // the access token is issued directly: no refresh here
        ACCESS_TOKEN: s.tenant.token,
        SYNC_STATE: stateFile,
        BANK_FILE: bankFile,
        SYNC_FOR_MS: '2000',
      };
      const { stdout } = await run(process.execPath, [SYNC], { env, timeout: 60_000 });
      return { stdout, state: JSON.parse(fs.readFileSync(stateFile, 'utf8')) };
    };
    const issuedInvoice = async (amount: number) => {
      const client = await fsm.createOne('clients', { name: `Client ${amount}` });
      const draft = await fsm.createOne('invoices', {
        client: { id: client.id },
        lines: [{ description: 'Call-out', quantity: 1, unitPrice: amount }],
      });
      return fsm.invoices.issue(draft);
    };
    const files = async () => {
      const ids = [];
      for await (const f of fsm.list('files', { fields: ['name'] })) ids.push(f.id);
      return ids.sort((a, b) => a - b);
    };

    test('a first run copies and pushes; a second resumes after its cursor, pushing each transfer once', async () => {
      const a = await issuedInvoice(45);
      fs.writeFileSync(bankFile, JSON.stringify([{ tx: 'T1', invoice: a.id, amount: 45 }]));
      const first = await sync();
      assert.match(first.stdout, /pushed T1: payment \d+\n/);
      const paymentA = first.state.pushed.T1 as number;
      assert.equal(first.state.payments[paymentA].amount, 45);
      assert.equal(first.state.payments[paymentA].invoice.id, a.id);
      assert.ok(first.state.invoices[a.id], 'the invoice is copied');
      assert.notEqual(first.state.invoices[a.id].state, 'draft');
      assert.deepEqual(await files(), [first.state.pdfs[a.id]], "the issued invoice's PDF, archived");
      assert.ok(first.state.cursor > 0);

      // Meanwhile: another invoice issued, and a transfer the program sent before a crash lost its answer.
      const b = await issuedInvoice(60);
      const c = await issuedInvoice(75);
      const lost = await fsm.createOne(
        'payments',
        { invoice: { id: c.id }, amount: 75, method: 'bankTransfer', reference: 'T3' },
        { idempotencyKey: 'bank-T3' },
      );
      fs.writeFileSync(
        bankFile,
        JSON.stringify([
          { tx: 'T1', invoice: a.id, amount: 45 },
          { tx: 'T2', invoice: b.id, amount: 60 },
          { tx: 'T3', invoice: c.id, amount: 75 },
        ]),
      );
      const second = await sync();
      assert.doesNotMatch(second.stdout, /pushed T1/, 'T1 was pushed by the first run');
      assert.match(second.stdout, /pushed T2: payment \d+\n/);
      assert.match(second.stdout, new RegExp(`pushed T3: payment ${lost.id} \\(sent before\\)`));
      const forC = [];
      for await (const p of fsm.list('payments', { where: ['invoice.id', '=', c.id] })) forC.push(p.id);
      assert.deepEqual(forC, [lost.id], 'not paid twice');
      assert.ok(second.state.cursor > first.state.cursor);
      assert.deepEqual(Object.keys(second.state.invoices).map(Number).sort(), [a.id, b.id, c.id].sort());
      assert.equal(Object.keys(second.state.payments).length, 3);
      // Resumed after the cursor: A's events were not handled again (one PDF per invoice).
      const pdfs = [a.id, b.id, c.id].map((id) => second.state.pdfs[id] as number);
      assert.equal(pdfs[0], first.state.pdfs[a.id]);
      assert.deepEqual(
        await files(),
        [...pdfs].sort((x, y) => x - y),
      );
    });
  });
}
