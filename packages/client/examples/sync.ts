// Issue 50's integration: the account's invoices and payments copied and kept in step by the
// events feed, the bank's payments pushed once each, each issued invoice's PDF archived. Stopped
// at any time (Ctrl-C), the next run resumes from the state file (cursor, copy, tokens).
//   FSM_URL=… CLIENT_ID=… CLIENT_SECRET=… ACCESS_TOKEN=… REFRESH_TOKEN=… BANK_FILE=bank.json node sync.js
import fs from 'node:fs';
import { AuthorizationRevokedError, FieldService, type ChangeEvent, type Tokens } from '@fieldservice/client';

interface State {
  cursor: number; // the last event handled: the feed resumes after it
  invoices: Record<number, ChangeEvent<'invoices'>['data']>;
  payments: Record<number, ChangeEvent<'payments'>['data']>;
  pushed: Record<string, number>; // bank transaction → the payment made of it
  pdfs: Record<number, number>; // invoice → the file of its PDF
  tokens?: Tokens;
}
/** A transfer the bank received: its transaction id, the invoice it pays, how much. */
type BankPayment = { tx: string; invoice: number; amount: number };

const file = process.env.SYNC_STATE ?? 'sync-state.json';
const state: State = fs.existsSync(file)
  ? JSON.parse(fs.readFileSync(file, 'utf8'))
  : { cursor: 0, invoices: {}, payments: {}, pushed: {}, pdfs: {} };
const save = () => (fs.writeFileSync(`${file}.tmp`, JSON.stringify(state)), fs.renameSync(`${file}.tmp`, file));

const fsm = await FieldService.discover({
  issuer: process.env.FSM_URL ?? 'http://127.0.0.1:8080',
  clientId: process.env.CLIENT_ID ?? '',
  clientSecret: process.env.CLIENT_SECRET ?? '',
  redirectUri: process.env.REDIRECT_URI ?? 'http://127.0.0.1:9000/callback',
  tokens: state.tokens ?? {
    accessToken: process.env.ACCESS_TOKEN ?? '',
    refreshToken: process.env.REFRESH_TOKEN,
    expiresAt: Date.now() + 3_600_000,
  },
  onTokens: (tokens) => ((state.tokens = tokens), save()),
});
const stop = new AbortController();
process.once('SIGINT', () => stop.abort());
const ms = Number(process.env.SYNC_FOR_MS ?? 0); // 0: until stopped
const signal = ms ? AbortSignal.any([stop.signal, AbortSignal.timeout(ms)]) : stop.signal;

try {
  // 1. Push: each transfer once. Its transaction id is the Idempotency-Key: one sent before a
  // crash that lost the answer is answered again (`meta.replayed`), never paid twice.
  const bank: BankPayment[] = JSON.parse(fs.readFileSync(process.env.BANK_FILE ?? 'bank.json', 'utf8'));
  for (const t of bank.filter((t) => !(t.tx in state.pushed))) {
    const payment = await fsm.createOne(
      'payments',
      { invoice: { id: t.invoice }, amount: t.amount, method: 'bankTransfer', reference: t.tx },
      { idempotencyKey: `bank-${t.tx}` },
    );
    state.pushed[t.tx] = payment.id;
    save();
    console.log(`pushed ${t.tx}: payment ${payment.id}${payment.meta.replayed ? ' (sent before)' : ''}`);
  }

  // 2. Pull: every invoice and payment event after the cursor, then each new one as it commits.
  const onCursor = (id: number) => ((state.cursor = id), save()); // once an event's body has finished
  const where = { or: [['collection', '=', 'invoices'] as const, ['collection', '=', 'payments'] as const] };
  for await (const e of fsm.events.follow({ after: state.cursor, where, signal, onCursor })) {
    if (e.collection === 'payments') {
      if (e.type === 'payments.deleted') delete state.payments[e.data.id];
      else state.payments[e.data.id] = e.data;
    } else if (e.collection === 'invoices') {
      if (e.type === 'invoices.deleted') delete state.invoices[e.data.id];
      else {
        state.invoices[e.data.id] = e.data;
        // Issued (or paid since): its PDF archived once; the typed action answers the file it made.
        if (!['draft', 'void'].includes(e.data.state) && !(e.data.id in state.pdfs))
          state.pdfs[e.data.id] = (await fsm.invoices.pdf(e.data.id)).id;
      }
    }
  }
} catch (err) {
  if (!(err instanceof AuthorizationRevokedError)) throw err;
  console.error('the owner revoked this app: sign in again'); // the dead tokens are gone from the state
  process.exitCode = 2;
}
console.log(`in step: ${Object.keys(state.invoices).length} invoices, ${Object.keys(state.payments).length} payments`);
