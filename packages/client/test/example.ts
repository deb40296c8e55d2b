import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { FieldService, verifyWebhook, type Item } from '@fieldservice/client';

// The server's origin (its OAuth issuer) and your client's registration (`fsm clients create`).
const redirectUri = new URL(process.env.REDIRECT_URI ?? 'http://127.0.0.1:9000/callback');
const fsm = await FieldService.discover({
  issuer: process.env.FSM_URL ?? 'http://127.0.0.1:8080',
  clientId: process.env.CLIENT_ID!,
  clientSecret: process.env.CLIENT_SECRET!,
  redirectUri: redirectUri.href,
});

// 1. Sign in: send the user to the authorization URL; the redirect brings the code back here.
const { url, state, codeVerifier } = await fsm.authorizationUrl();
console.log(`Sign in at ${url}`);
const callback = await new Promise<URL>((resolve) => {
  const server = http.createServer((req, res) => {
    res.end('Signed in: you can close this tab.');
    server.close();
    resolve(new URL(req.url!, redirectUri));
  });
  server.listen(Number(redirectUri.port), redirectUri.hostname);
});
await fsm.signIn(callback, { state, codeVerifier }); // checks state and iss, sends the PKCE verifier

// 2. The jobs changed since yesterday, every page of them.
const yesterday = new Date(Date.now() - 24 * 60 * 60 * 1000);
const jobs = [];
for await (const job of fsm.list('jobs', {
  where: ['modified', '>', yesterday],
  fields: ['title', 'priority', 'modified'],
  sort: ['-modified'],
})) {
  console.log(`job ${job.id}: ${job.title} (${job.priority}), changed ${job.modified}`);
  jobs.push(job);
}

// 3. A webhook receiver, subscribed to visit events; it verifies each delivery's signature.
let secret = '';
let announce = (_visit: Item<'visits'>) => {};
const announced = new Promise<Item<'visits'>>((resolve) => (announce = resolve));
const receiver = http.createServer(async (req, res) => {
  try {
    const event = await verifyWebhook(req, secret);
    res.writeHead(204).end();
    if (event.type === 'visits.created') announce(event.data.data); // typed by its type: the visit
  } catch {
    res.writeHead(400).end(); // not signed with our secret: ignored
  }
});
await new Promise<void>((resolve) => receiver.listen(Number(process.env.WEBHOOK_PORT ?? 9001), '127.0.0.1', resolve));
const { port } = receiver.address() as AddressInfo;
const [hook] = await fsm.create('webhooks', [{ url: `http://127.0.0.1:${port}/hook`, events: ['visits.*'] }]);
secret = hook.secret!; // shown this once: keep it

// 4. A visit tomorrow at 09:00 UTC on the most recently changed job (or a new one).
const job = jobs[0] ?? (await fsm.create('jobs', [{ title: 'Boiler inspection' }]))[0];
const start = new Date(Date.now() + 24 * 60 * 60 * 1000);
start.setUTCHours(9, 0, 0, 0);
const [visit] = await fsm.create('visits', [
  {
    job: { id: job.id },
    label: 'Inspection',
    startTime: start.toISOString(),
    endTime: new Date(start.getTime() + 60 * 60 * 1000).toISOString(),
  },
]);
console.log(`visit ${visit.id} created on job ${job.id}`);

const announcedVisit = await announced; // delivered at least once: dedupe on event.id in production
console.log(`webhook visits.created: visit ${announcedVisit.id} (${announcedVisit.label})`);

// 5. Clean up: remove the webhook (nothing is sent to this receiver again), then sign out.
await fsm.deleteItem('webhooks', hook.id);
receiver.close();
await fsm.revoke(); // the tokens stop working
