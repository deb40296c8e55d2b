import http from 'node:http';
import { parentPort, workerData } from 'node:worker_threads';

/**
 * The worker thread of bench/streams.ts: opens the streams, writes the visits, and tells when each
 * visit's event reached each stream. Commands: open (n streams), write, finish, close.
 */
const { base, tokens, jobIds, contractorId, writesPerSecond } = workerData as {
  base: string;
  tokens: string[];
  jobIds: number[];
  contractorId: number;
  writesPerSecond: number;
};
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Per stream: visit id -> when its event arrived. */
let received: Map<number, number>[] = [];
let requests: http.ClientRequest[] = [];
let agent: http.Agent | undefined;

async function open(n: number): Promise<void> {
  agent = new http.Agent({ keepAlive: false, maxSockets: Infinity });
  received = [];
  requests = [];
  const url = `${base}/events?where=${encodeURIComponent('collection = "visits"')}`;
  await Promise.all(
    Array.from(
      { length: n },
      (_, i) =>
        new Promise<void>((resolve, reject) => {
          const got = new Map<number, number>();
          received.push(got);
          const headers = {
            authorization: `Bearer ${tokens[Math.floor(i / 10)]}`,
            'x-version': '1.0',
            accept: 'text/event-stream',
          };
          const req = http.get(url, { agent, headers }, (res) => {
            if (res.statusCode !== 200) return reject(new Error(`stream ${i}: ${res.statusCode}`));
            let buf = '';
            res.setEncoding('utf8');
            res.on('data', (d: string) => {
              buf += d;
              const end = buf.lastIndexOf('\n\n');
              if (end < 0) return;
              const now = Date.now();
              for (const m of buf.slice(0, end).matchAll(/^data: \{.*?"item":\{"id":(\d+)\}/gm))
                got.set(Number(m[1]), now);
              buf = buf.slice(end + 2);
            });
            resolve();
          });
          requests.push(req);
          req.on('error', (err) => ((err as NodeJS.ErrnoException).code === 'ECONNRESET' ? undefined : reject(err)));
        }),
    ),
  );
}

async function close(): Promise<void> {
  for (const r of requests) r.destroy();
  agent?.destroy();
  received = [];
  await sleep(500);
}

/** The visits being written: the answers' times by visit id. */
let answered = new Map<number, number>();
let writing: { stop(): Promise<void> } | undefined;

function write(): void {
  answered = new Map();
  let running = true;
  let n = 0;
  const pending: Promise<void>[] = [];
  const started = Date.now();
  const loop = (async () => {
    while (running) {
      await sleep(Math.max(0, started + (n * 1000) / writesPerSecond - Date.now()));
      const job = jobIds[(n * 7919) % jobIds.length];
      n++;
      const visit = {
        job: { id: job },
        user: { id: contractorId },
        label: `Stream ${n}`,
        startTime: '2031-02-01T09:00:00Z',
        endTime: '2031-02-01T10:00:00Z',
      };
      pending.push(
        fetch(`${base}/visits`, {
          method: 'POST',
          headers: { authorization: `Bearer ${tokens[0]}`, 'x-version': '1.0', 'content-type': 'application/json' },
          body: JSON.stringify({ visits: [visit] }),
        }).then(async (res) => {
          const body = (await res.json()) as { visits?: { id: number }[] };
          if (res.status !== 200 || !body.visits)
            throw new Error(`POST /visits: ${res.status} ${JSON.stringify(body)}`);
          answered.set(body.visits[0].id, Date.now());
        }),
      );
    }
  })();
  writing = {
    stop: async () => {
      running = false;
      await loop;
      await Promise.all(pending);
    },
  };
}

/** Stops writing; waits until every stream has every answered visit (at most 10 s). */
async function finish() {
  await writing?.stop();
  const deadline = Date.now() + 10_000;
  const complete = () => received.filter((g) => [...answered.keys()].every((id) => g.has(id))).length;
  while (Date.now() < deadline && complete() < received.length) await sleep(100);
  const latencies: number[] = [];
  for (const got of received) for (const [id, at] of answered) latencies.push((got.get(id) ?? Infinity) - at);
  return { complete: complete(), latencies, visits: answered.size };
}

parentPort!.on('message', (m: { cmd: string; n?: number }) => {
  const done = (value?: unknown) => parentPort!.postMessage(value);
  const fail = (err: unknown) => {
    throw err;
  };
  if (m.cmd === 'open') open(m.n!).then(() => done(), fail);
  else if (m.cmd === 'write') done(write());
  else if (m.cmd === 'finish') finish().then(done, fail);
  else if (m.cmd === 'close') close().then(() => done(), fail);
});
