import { fork, type ChildProcess } from 'node:child_process';
import type { Readable } from 'node:stream';
import type { JobReportView } from './job-report.js';

/**
 * The job report is rendered in a child process of its own (job-report-child.ts), started for one
 * report and gone after it: decoding ten 12-megapixel photos (sharp, libvips) and laying out the
 * PDF (pdfkit, fontkit and the fonts) took the server from 110 MB to 245 MB resident, memory that
 * glibc's malloc arenas kept after the report. The server never loads sharp; it streams each image's
 * bytes to the child as it reads them (never a whole photo in its memory) and gets the PDF back.
 * The child runs with `MALLOC_ARENA_MAX=1` (glibc reads it at start, so it is set here, not by
 * whoever starts the server): libvips' threads then share one arena instead of keeping one each.
 */
export interface ImageSource {
  kind: 'photo' | 'signature';
  /** The image's bytes, or undefined when there are none to print. */
  open(): Promise<Readable | undefined>;
}

/** A renderer still at work after this long is stopped (the report fails). */
const TIMEOUT_MS = 120_000;
/** At most this many reports render at once (each child is up to about 130 MB); others wait. */
const AT_ONCE = 2;
let running = 0;
const waiting: (() => void)[] = [];

async function turn<T>(work: () => Promise<T>): Promise<T> {
  if (running >= AT_ONCE) await new Promise<void>((resolve) => waiting.push(resolve));
  running++;
  try {
    return await work();
  } finally {
    running--;
    waiting.shift()?.();
  }
}

/** What the child answers to an image's end (`decoded`) and to the view (`pdf`), or a failure. */
type Reply = { t: 'decoded' } | { t: 'pdf'; data: Uint8Array } | { t: 'error'; message: string };
/** What the child is sent: an image's bytes in pieces, its end, and then the view. */
export type Request =
  | { t: 'chunk'; data: Uint8Array }
  | { t: 'image'; kind: 'photo' | 'signature'; bytes: boolean }
  | { t: 'render'; view: JobReportView<number | undefined> };

/** Renders the report apart: `view` names images by their index in `images`. */
export function renderJobReportApart(view: JobReportView<number | undefined>, images: ImageSource[]): Promise<Buffer> {
  return turn(async () => {
    const child: ChildProcess = fork(new URL('./job-report-child.js', import.meta.url), [], {
      serialization: 'advanced',
      execArgv: [],
      env: { ...process.env, MALLOC_ARENA_MAX: '1' },
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    const replies: Reply[] = [];
    const pending: ((r: Reply) => void)[] = [];
    let gone: Error | undefined;
    child.on('message', (m: Reply) => (pending.length ? pending.shift()!(m) : replies.push(m)));
    child.once('exit', (code) => {
      gone = new Error(`the job report's renderer stopped (exit ${code})`);
      for (const p of pending.splice(0)) p({ t: 'error', message: gone.message });
    });
    child.once('error', () => undefined);
    const timer = setTimeout(() => child.kill('SIGKILL'), TIMEOUT_MS);
    const reply = () =>
      new Promise<Reply>((resolve) => {
        if (replies.length) resolve(replies.shift()!);
        else if (gone) resolve({ t: 'error', message: gone.message });
        else pending.push(resolve);
      });
    const send = (m: Request) =>
      new Promise<void>((resolve, reject) => {
        if (gone) return reject(gone);
        child.send(m, (e) => (e ? reject(e) : resolve()));
      });
    const expect = async <T extends Reply['t']>(t: T) => {
      const r = await reply();
      if (r.t !== t) throw new Error(r.t === 'error' ? r.message : `the job report's renderer answered ${r.t}`);
      return r as Extract<Reply, { t: T }>;
    };
    try {
      for (const image of images) {
        const stream = await image.open();
        if (stream) for await (const chunk of stream) await send({ t: 'chunk', data: chunk as Buffer });
        await send({ t: 'image', kind: image.kind, bytes: stream !== undefined });
        await expect('decoded');
      }
      await send({ t: 'render', view });
      const { data } = await expect('pdf');
      return Buffer.from(data.buffer, data.byteOffset, data.byteLength);
    } finally {
      clearTimeout(timer);
      if (!gone) child.kill();
    }
  });
}
