import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';
import { measure, type LoadSettings, type Measurement, type Workload } from './load.js';
import type { Target } from './report.js';
import type { RunningServer } from './server.js';

/**
 * Customers' rows (PRODUCT §18, issue 48), on our server of the main data set:
 * - 1,000 messages queued at once (10 concurrent `POST /messages` of 100) on a fresh server whose
 *   `SMTP_URL` is a local `smtp-server`, timed from the first request to the last message received:
 *   messages per second, and every Message-ID received exactly once (counted at the relay);
 * - a quote's share page and a job's booking page (3 crew with working hours, one with an
 *   afternoon of leave: 14 days of slots)
 *   beside W3 in interleaved turns: target share page >= 0.5 of W3's requests per second.
 * `BENCH_ONLY=customers` runs these rows alone (the data set is still the main one).
 */
export interface CustomersContext {
  server: RunningServer;
  /** A fresh server on the same data with these settings besides (its SMTP_URL). */
  start(env: Record<string, string>): Promise<RunningServer>;
  /** The JSON request headers of an Administrator of the first account. */
  headers: Record<string, string>;
  accountId: number;
  w3: Workload;
  load: LoadSettings;
  turnOf(load: LoadSettings, round: number): LoadSettings;
  mergeTurns(ms: Measurement[]): Measurement | undefined;
  record(key: string, label: string, m: Measurement | undefined, rssMb?: number, note?: string): void;
  log(m: string): void;
}

const ROUNDS = 3;
const MESSAGES = 1000;
const PER_REQUEST = 100;
const DELIVERY_TIMEOUT_MS = 300_000;

/** A relay that accepts every message and counts its Message-IDs (from the header, no parsing). */
async function countingRelay() {
  const ids = new Map<string, number>();
  let last = 0;
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onData(stream, _session, cb) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        const raw = Buffer.concat(chunks).toString('utf8');
        const head = raw.slice(0, raw.indexOf('\r\n\r\n') >>> 0);
        const id = /^Message-ID:\s*(<[^>\r\n]+>)/im.exec(head)?.[1] ?? '';
        ids.set(id, (ids.get(id) ?? 0) + 1);
        last = Date.now();
        cb();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.server.address() as AddressInfo;
  return {
    url: `smtp://127.0.0.1:${port}`,
    ids,
    lastAt: () => last,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

export async function benchCustomers(c: CustomersContext): Promise<{ ratios: string[]; targets: Target[] }> {
  const api = async (url: string, method: string, path: string, body?: unknown) => {
    const res = await fetch(`${url}${path}`, {
      method,
      headers: c.headers,
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const json = (await res.json()) as Record<string, any>;
    if (res.status !== 200) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(json).slice(0, 300)}`);
    return json;
  };
  const tag = Date.now().toString(36);

  // 1,000 messages queued at once, delivered to a local relay by a server that has SMTP_URL.
  const relay = await countingRelay();
  const mailer = await c.start({ SMTP_URL: relay.url, MAIL_FROM: 'bench@fsm.example' });
  let mailNote: string;
  let perSecond: number | undefined;
  let duplicates: number;
  let missing: number;
  try {
    const started = Date.now();
    const answers = await Promise.all(
      Array.from({ length: MESSAGES / PER_REQUEST }, (_, k) =>
        api(mailer.url, 'POST', '/messages', {
          messages: Array.from({ length: PER_REQUEST }, (_, i) => ({
            to: `customer.${tag}.${k * PER_REQUEST + i}@example.com`,
            subject: `Your visit ${k * PER_REQUEST + i}`,
            text: `Hello,\n\nThis is message ${k * PER_REQUEST + i} of the bench.\n`,
          })),
        }),
      ),
    );
    const queuedMs = Date.now() - started;
    const ours = answers.flatMap((a) => (a.messages as { messageId: string }[]).map((m) => m.messageId));
    const end = started + DELIVERY_TIMEOUT_MS;
    const received = () => ours.filter((id) => relay.ids.has(id)).length;
    while (received() < ours.length && Date.now() < end) await new Promise((r) => setTimeout(r, 50));
    const deliveredMs = relay.lastAt() - started;
    // A little longer: a message sent twice would arrive now.
    await new Promise((r) => setTimeout(r, 2000));
    missing = ours.length - received();
    duplicates = ours.filter((id) => (relay.ids.get(id) ?? 0) > 1).length;
    perSecond = missing ? undefined : (ours.length * 1000) / deliveredMs;
    mailNote = `${ours.length} queued in ${queuedMs} ms, ${ours.length - missing} received in ${(deliveredMs / 1000).toFixed(1)} s: ${perSecond?.toFixed(0) ?? 'n/a'} messages/s; Message-IDs received twice: ${duplicates}, never: ${missing}`;
    c.record(
      'MAILsend',
      `1,000 messages queued at once, delivered to a local smtp-server`,
      undefined,
      mailer.peakRss().max,
      mailNote,
    );
  } finally {
    await mailer.stop();
    await relay.close();
  }

  // A quote's share page and a job's booking page beside W3.
  const url = c.server.url;
  const client = (await api(url, 'POST', '/clients', { clients: [{ name: `Bench Customer ${tag}` }] })).clients[0].id;
  const job = (await api(url, 'POST', '/jobs', { jobs: [{ title: 'Bench quote job', client: { id: client } }] }))
    .jobs[0].id;
  const quote = (
    await api(url, 'POST', '/quotes', {
      quotes: [
        {
          job: { id: job },
          notes: 'Valid for 30 days.',
          lines: [
            { description: 'Boiler service', quantity: 1, unitPrice: 120.5 },
            { description: 'Valve', quantity: 2, unitPrice: 9.99 },
            { description: 'Call-out', quantity: 1, unitPrice: 45 },
          ],
        },
      ],
    })
  ).quotes[0].id;
  await api(url, 'POST', `/quotes/${quote}/send`);
  const sharePath = new URL((await api(url, 'POST', `/quotes/${quote}/shareLink`)).quotes[0].shareUrl).pathname;
  const place = { lat: 51.5, lng: -0.12 };
  const skill = (await api(url, 'POST', '/skills', { skills: [{ name: `Bench booking ${tag}` }] })).skills[0].id;
  const crew = (
    await api(url, 'POST', '/users', {
      users: Array.from({ length: 3 }, (_, i) => ({
        account: { id: c.accountId },
        firstName: `Crew${i}`,
        lastName: 'Booking',
        email: `booking.${tag}.${i}@example.com`,
        mobile: `+4477008${String(i).padStart(5, '0')}`,
        workingHours: ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'].map((day) => ({
          day,
          start: '08:00',
          end: '18:00',
        })),
        homeLocation: place,
        skills: [{ id: skill }],
      })),
    })
  ).users.map((u: { id: number }) => u.id) as number[];
  // One of them on leave one afternoon, as crews are (and so the account has leave to count).
  await api(url, 'POST', '/unavailabilities', {
    unavailabilities: [
      {
        user: { id: crew[0] },
        startTime: new Date(Date.now() + 2 * 86_400_000).toISOString().slice(0, 10) + 'T13:00:00Z',
        endTime: new Date(Date.now() + 2 * 86_400_000).toISOString().slice(0, 10) + 'T18:00:00Z',
        reason: 'leave',
      },
    ],
  });
  const bookable = (
    await api(url, 'POST', '/jobs', {
      jobs: [
        {
          title: 'Bench booking job',
          requiredSkills: [{ id: skill }],
          address: { line1: '1 Bench St', location: place },
        },
      ],
    })
  ).jobs[0].id;
  const bookingPath = new URL((await api(url, 'POST', `/jobs/${bookable}/bookingLink`)).jobs[0].bookingUrl).pathname;
  const page = async (path: string) => {
    const res = await fetch(`${url}${path}`);
    const html = await res.text();
    if (res.status !== 200) throw new Error(`${path.split('/').slice(0, 3).join('/')}: ${res.status}`);
    return html;
  };
  await page(sharePath);
  const buttons = (await page(bookingPath)).match(/name="slot"/g)?.length ?? 0;
  const share: Workload = { method: 'GET', headers: {}, path: sharePath };
  const booking: Workload = { method: 'GET', headers: {}, path: bookingPath };
  const turns = { w3: [] as Measurement[], share: [] as Measurement[], booking: [] as Measurement[] };
  for (let round = 0; round < ROUNDS; round++) {
    const turn = c.turnOf(c.load, round);
    turns.w3.push(await measure(url, c.w3, turn, c.server));
    turns.share.push(await measure(url, share, turn, c.server));
    turns.booking.push(await measure(url, booking, turn, c.server));
  }
  const rss = c.server.peakRss().max;
  const w3 = c.mergeTurns(turns.w3);
  const shareM = c.mergeTurns(turns.share);
  const bookingM = c.mergeTurns(turns.booking);
  c.record('CUw3', `W3 GET /jobs/ID, ${ROUNDS} turns beside the share pages`, w3, rss);
  c.record('CUshare', `GET /share/quotes/TOKEN (a sent quote, 3 lines), ${ROUNDS} turns`, shareM, rss);
  c.record(
    'CUbooking',
    `GET /share/jobs/TOKEN (${buttons} slots of 3 crew over 14 days), ${ROUNDS} turns`,
    bookingM,
    rss,
  );
  const shareRatio = shareM && w3 ? shareM.requestsPerSecond / w3.requestsPerSecond : undefined;
  const bookingRatio = bookingM && w3 ? bookingM.requestsPerSecond / w3.requestsPerSecond : undefined;
  const f2 = (v?: number) => (v === undefined ? 'n/a' : v.toFixed(2));
  c.log(
    `customers (same run): share page / W3 ${f2(shareRatio)}, booking page / W3 ${f2(bookingRatio)}; mail: ${mailNote}`,
  );
  return {
    ratios: [
      `  messages: ${mailNote}`,
      `  share page / W3 ${f2(shareRatio)}, booking page / W3 ${f2(bookingRatio)} (interleaved turns)`,
    ],
    targets: [
      { name: 'share page / W3 requests per second', value: shareRatio, ok: (v) => v >= 0.5, want: '>= 0.5' },
      { name: '1,000 messages: Message-IDs received twice', value: duplicates, ok: (v) => v === 0, want: '0' },
      { name: '1,000 messages: Message-IDs never received', value: missing, ok: (v) => v === 0, want: '0' },
    ],
  };
}
