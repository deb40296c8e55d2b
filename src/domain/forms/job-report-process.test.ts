import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import sharp from 'sharp';
import type { JobReportView } from './job-report.js';
import { renderJobReportApart, type ImageSource } from './job-report-process.js';

/** The job report rendered in its own process: images streamed to it in pieces, the PDF back. */
const view = (photos: number[], signature: number): JobReportView<number> => ({
  company: 'Alpha 1',
  companyLines: [],
  logo: null,
  paperSize: 'A4',
  generated: '2026-12-02 09:15',
  job: { reference: 'J-000001', title: 'Boiler', client: [], site: null, address: [] },
  visits: [],
  submissions: [
    {
      template: 'Check',
      by: 'Ada',
      submitted: '2026-12-02 09:15',
      answers: [
        { label: 'Photos', photos },
        { label: 'Signature', signature: { image: signature, name: 'Jane Customer', time: '2026-12-02 09:15' } },
      ],
    },
  ],
  notes: [],
  work: [],
});
/** A source that streams `bytes` in 64 KB pieces. */
const pieces = (bytes: Buffer): ImageSource => ({
  kind: 'photo',
  open: async () =>
    Readable.from(
      Array.from({ length: Math.ceil(bytes.length / 65536) }, (_, i) => bytes.subarray(i * 65536, (i + 1) * 65536)),
    ),
});
const textOf = (pdf: Buffer) => {
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'report-')), 'r.pdf');
  fs.writeFileSync(file, pdf);
  return execFileSync('pdftotext', [file, '-'], { encoding: 'utf8' });
};

test('a photo streamed in pieces is printed downscaled; bytes that are no image, or none, print a note', async () => {
  const photo = await sharp({ create: { width: 4000, height: 3000, channels: 3, background: '#3366aa' } })
    .jpeg()
    .toBuffer();
  const pdf = await renderJobReportApart(view([0, 1], 2), [
    pieces(photo),
    pieces(Buffer.from('%PDF-1.7 not an image')),
    { kind: 'signature', open: async () => undefined },
  ]);
  assert.equal(pdf.subarray(0, 5).toString(), '%PDF-');
  const latin = pdf.toString('latin1');
  assert.match(latin, /\/Width 1000\s*\/Height 750|\/Height 750\s*\/Width 1000/);
  const text = textOf(pdf);
  assert.match(text, /not an image that can be printed/);
  assert.match(text, /Signed by Jane Customer/);
});

test('storage failing midway fails the report, and the next reports (three at once) still render', async () => {
  const broken: ImageSource = {
    kind: 'photo',
    open: async () =>
      new Readable({
        read() {
          this.destroy(new Error('the store went away'));
        },
      }),
  };
  await assert.rejects(renderJobReportApart(view([0], 0), [broken]), /the store went away/);
  const pdfs = await Promise.all([1, 2, 3].map(() => renderJobReportApart(view([], 0), [])));
  for (const pdf of pdfs) assert.match(textOf(pdf), /Signed by Jane Customer/);
});
