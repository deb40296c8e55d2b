import { printable, type PrintImage } from './images.js';
import { renderJobReport, withImages } from './job-report.js';
import type { Request } from './job-report-process.js';

/**
 * The job report's renderer (job-report-process.ts starts it for one report): the images arrive
 * one after the other, each decoded and downscaled as soon as its bytes are in (one raw photo in
 * memory at a time), then the view, answered with the PDF.
 */
const images: (PrintImage | undefined)[] = [];
let chunks: Buffer[] = [];
let queue = Promise.resolve();

const answer = (m: unknown) => new Promise<void>((resolve) => process.send!(m, () => resolve()));

async function handle(m: Request): Promise<void> {
  if (m.t === 'chunk') chunks.push(Buffer.from(m.data.buffer, m.data.byteOffset, m.data.byteLength));
  else if (m.t === 'image') {
    const bytes = Buffer.concat(chunks);
    chunks = [];
    images.push(m.bytes && bytes.length ? await printable(bytes, m.kind) : undefined);
    await answer({ t: 'decoded' });
  } else {
    const pdf = await renderJobReport(withImages(m.view, images));
    await answer({ t: 'pdf', data: pdf });
    process.exit(0);
  }
}

process.on('message', (m: Request) => {
  queue = queue
    .then(() => handle(m))
    .catch(async (e: unknown) => {
      await answer({ t: 'error', message: e instanceof Error ? e.message : String(e) });
      process.exit(1);
    });
});
// The server gone (killed, or its channel closed) is the end of this report.
process.on('disconnect', () => process.exit(0));
