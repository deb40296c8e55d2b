import sharp from 'sharp';
import { measure, type LoadSettings, type Measurement, type Workload } from './load.js';
import { childPeakRss, type RunningServer } from './server.js';

/**
 * Forms' rows (issue 47), on our server of the main data set:
 * - `POST /formSubmissions` of one submission with 50 answers (3 of them photos), at 32
 *   connections, beside W4 at 32 connections in interleaved turns: target >= 0.5 of W4's rate;
 * - the job report of a job with 10 submissions and ten 12-megapixel photos, rendered 3 times on a
 *   server started for it alone: its time and the server's peak RSS (target <= 150 MB), the PDF's size,
 *   and the peak RSS of the child process that renders each report (sampled every 50 ms).
 * `BENCH_ONLY=forms` runs these rows alone (the data set is still the main one).
 */
export interface FormsContext {
  server: RunningServer;
  /** A fresh server on the same data (the report's memory is measured on it alone). */
  start(): Promise<RunningServer>;
  headers: Record<string, string>;
  w4: Workload;
  jobIds: number[];
  load: LoadSettings;
  turnOf(load: LoadSettings, round: number): LoadSettings;
  mergeTurns(ms: Measurement[]): Measurement | undefined;
  record(key: string, label: string, m: Measurement | undefined, rssMb?: number, note?: string): void;
  log(m: string): void;
}

const ROUNDS = 3;

export async function benchForms(c: FormsContext): Promise<void> {
  const { headers } = c;
  const api = async (url: string, method: string, path: string, body: unknown) => {
    const res = await fetch(`${url}${path}`, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const json = (await res.json()) as Record<string, Record<string, unknown>[]>;
    if (res.status !== 200) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(json).slice(0, 300)}`);
    return json;
  };
  const upload = async (url: string, bytes: Buffer, name: string, job: number) => {
    const res = await fetch(`${url}/files/upload?name=${name}&job=${job}`, {
      method: 'POST',
      headers: { authorization: headers.authorization, 'x-version': '1.0', 'content-type': 'image/jpeg' },
      body: new Uint8Array(bytes),
    });
    if (res.status !== 200) throw new Error(`upload: ${res.status} ${(await res.text()).slice(0, 300)}`);
    return ((await res.json()) as { files: { id: number }[] }).files[0].id;
  };
  const phone = await sharp({
    create: {
      width: 4000,
      height: 3000,
      channels: 3,
      background: '#808080',
      noise: { type: 'gaussian', mean: 128, sigma: 40 },
    },
  })
    .jpeg({ quality: 90 })
    .toBuffer();

  // A submission of 50 answers, 3 photos among them.
  const url = c.server.url;
  const job = c.jobIds[0];
  const fields = [
    ...Array.from({ length: 44 }, (_, i) => ({
      key: `check${i}`,
      label: `Check ${i + 1}`,
      type: 'boolean',
      required: true,
    })),
    ...Array.from({ length: 3 }, (_, i) => ({ key: `reading${i}`, label: `Reading ${i + 1}`, type: 'number' })),
    { key: 'notes', label: 'Notes', type: 'text' },
    { key: 'serviced', label: 'Serviced on', type: 'date' },
    { key: 'photos', label: 'Photos', type: 'photo' },
  ];
  const template = (await api(url, 'POST', '/formTemplates', { formTemplates: [{ name: 'Bench checklist', fields }] }))
    .formTemplates[0].id as number;
  const photos: number[] = [];
  for (let i = 0; i < 3; i++) photos.push(await upload(url, phone, `bench-${i}.jpg`, job));
  const answers = {
    ...Object.fromEntries(Array.from({ length: 44 }, (_, i) => [`check${i}`, i % 5 !== 0])),
    reading0: 20.5,
    reading1: 1013,
    reading2: 0.25,
    notes: 'Flue clear, seals replaced, customer advised.',
    serviced: '2031-01-01',
    photos: photos.map((id) => ({ id })),
  };
  const body = JSON.stringify({ formSubmissions: [{ template: { id: template }, job: { id: job }, answers }] });
  const submit: Workload = { method: 'POST', headers, path: '/formSubmissions', itemsPerRequest: 1, body: () => body };
  const load32 = { ...c.load, connections: 32 };
  const turns = { w4: [] as Measurement[], submit: [] as Measurement[] };
  for (let round = 0; round < ROUNDS; round++) {
    const t = c.turnOf(load32, round);
    turns.w4.push(await measure(url, c.w4, t, c.server));
    turns.submit.push(await measure(url, submit, t, c.server));
  }
  const rss = c.server.peakRss().max;
  const w4 = c.mergeTurns(turns.w4);
  const sub = c.mergeTurns(turns.submit);
  c.record('FMw4', `W4 POST /users, 32 connections, ${ROUNDS} turns`, w4, rss);
  c.record('FMsubmit', `POST /formSubmissions (50 answers, 3 photos), 32 connections, ${ROUNDS} turns`, sub, rss);
  const ratio = w4 && sub ? (sub.requestsPerSecond / w4.requestsPerSecond).toFixed(2) : 'n/a';

  // The report of a job with 10 submissions and 10 such photos, on a server of its own.
  const fresh = await c.start();
  try {
    const reportJob = (await api(fresh.url, 'POST', '/jobs', { jobs: [{ title: 'Bench report job' }] })).jobs[0]
      .id as number;
    const one = (
      await api(fresh.url, 'POST', '/formTemplates', {
        formTemplates: [
          {
            name: 'Bench visit record',
            fields: [
              { key: 'notes', label: 'Notes', type: 'text' },
              { key: 'photo', label: 'Photo', type: 'photo' },
              ...Array.from({ length: 20 }, (_, i) => ({ key: `item${i}`, label: `Item ${i + 1}`, type: 'boolean' })),
            ],
          },
        ],
      })
    ).formTemplates[0].id as number;
    for (let i = 0; i < 10; i++) {
      const p = await upload(fresh.url, phone, `report-${i}.jpg`, reportJob);
      await api(fresh.url, 'POST', '/formSubmissions', {
        formSubmissions: [
          {
            template: { id: one },
            job: { id: reportJob },
            answers: {
              notes: `Visit ${i + 1}: all in order.`,
              photo: [{ id: p }],
              ...Object.fromEntries(Array.from({ length: 20 }, (_, k) => [`item${k}`, k % 3 !== 0])),
            },
          },
        ],
      });
    }
    const before = fresh.peakRss().max;
    const times: number[] = [];
    let size = 0;
    let renderer = 0;
    const sampler = setInterval(() => (renderer = Math.max(renderer, childPeakRss(fresh.pid))), 50);
    try {
      for (let i = 0; i < 3; i++) {
        const started = performance.now();
        const made = await api(fresh.url, 'POST', `/jobs/${reportJob}/report`, undefined);
        times.push(performance.now() - started);
        size = Number(made.files[0].size);
      }
    } finally {
      clearInterval(sampler);
    }
    const peak = fresh.peakRss().max;
    const note = `${times.map((ms) => Math.round(ms)).join(', ')} ms; PDF ${(size / 1024 / 1024).toFixed(2)} MB; server peak RSS ${peak.toFixed(0)} MB (${before.toFixed(0)} MB before the reports); renderer process peak RSS ${renderer.toFixed(0)} MB`;
    c.record(
      'FMreport',
      'POST /jobs/ID/report (10 submissions, ten 12 MP photos), fresh server, 3 renders',
      undefined,
      peak,
      note,
    );
    c.log(
      `forms (same run): POST /formSubmissions / W4 ${ratio} (target >= 0.5); report ${note} (targets: < 5 s, < 5 MB, <= 150 MB)`,
    );
  } finally {
    await fresh.stop();
  }
}
