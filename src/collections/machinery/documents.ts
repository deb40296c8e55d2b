import { Readable } from 'node:stream';
import type PDFKit from 'pdfkit';
import type { Executor } from '../../db/runner.js';
import { ApiError } from '../../errors.js';
import type { ActionAnswer, ActionRequest, Item } from './collection.js';
import { parties } from './document-queries.js';
import type { Line } from './lines.js';
import { exponentOf, MONEY_SCALE, toScaled } from './money.js';

/**
 * A quote or an invoice as a PDF (PRODUCT §9), written once for both: pdfkit (MIT, pure
 * JavaScript, its standard fonts built in), stored as a `files` item through the files
 * collection's own write path (its storage: local disk or the object store).
 */
export interface DocumentView {
  /** `INVOICE` or `QUOTE`. */
  title: string;
  number: string | null;
  /** A draft says DRAFT across the page. */
  draft: boolean;
  company: string;
  client: { name: string; address: string[] };
  /** Label and value pairs: `Issue date`, `Due date`, `Valid until`… */
  dates: [string, string][];
  lines: Line[];
  /** Stored units (10^-4). */
  subtotal: number;
  taxTotal: number;
  total: number;
  /** Amount paid and balance, for issued invoices. */
  extra?: [string, number][];
  currency: string;
  exponent: number;
  notes?: string | null;
}

/** What a quote's and an invoice's rows both hold. */
export interface DocumentRow {
  number: string | null;
  state: string;
  client_id: number | null;
  lines: string;
  subtotal: number;
  tax_total: number;
  total: number;
  currency: string;
  notes: string | null;
}

/** A quote's or an invoice's row as the page shows it, with its company and client. */
export async function documentView(
  db: Executor,
  accountId: number,
  title: 'QUOTE' | 'INVOICE',
  row: DocumentRow,
  own: Pick<DocumentView, 'dates' | 'extra'>,
): Promise<DocumentView> {
  const who = await parties(db, accountId, row.client_id);
  return {
    title,
    number: row.number,
    draft: row.state === 'draft',
    company: who.company,
    client: who.client,
    ...own,
    lines: JSON.parse(row.lines) as Line[],
    subtotal: Number(row.subtotal),
    taxTotal: Number(row.tax_total),
    total: Number(row.total),
    currency: row.currency,
    exponent: exponentOf(row.currency),
    notes: row.notes,
  };
}

/** Stored units as text with the currency's decimals and a decimal point (1,234.50). */
export function formatAmount(units: number, exponent: number): string {
  const negative = units < 0;
  const abs = BigInt(Math.abs(units));
  const scale = 10n ** BigInt(MONEY_SCALE);
  const int = (abs / scale).toString().replace(/\B(?=(\d{3})+(?!\d))/g, ',');
  const frac = (abs % scale).toString().padStart(MONEY_SCALE, '0').slice(0, exponent);
  return `${negative ? '-' : ''}${int}${exponent ? `.${frac}` : ''}`;
}

/** A JSON amount (an exact decimal of ≤ 4 places) formatted as formatAmount does. */
const fmt = (v: number, exponent: number) => formatAmount(toScaled(v, MONEY_SCALE), exponent);

/**
 * The PDF library, loaded by the first document rendered: importing the app took 107 MB of RSS
 * with it and 96 MB without, which a server that renders no PDF need not carry (the S3 client is
 * loaded the same way: src/storage/index.ts).
 */
let pdfkit: Promise<typeof PDFKit> | undefined;

/** Renders the document; resolves with the PDF's bytes. */
export async function renderDocument(v: DocumentView): Promise<Buffer> {
  const PDFDocument = await (pdfkit ??= import('pdfkit').then((m) => m.default as typeof PDFKit));
  const doc = new PDFDocument({ size: 'A4', margin: 50, info: { Title: `${v.title} ${v.number ?? 'DRAFT'}` } });
  const chunks: Buffer[] = [];
  const done = new Promise<Buffer>((resolve, reject) => {
    doc.on('data', (c: Buffer) => chunks.push(c));
    doc.on('end', () => resolve(Buffer.concat(chunks)));
    doc.on('error', reject);
  });
  const left = 50;
  const right = 545;
  if (v.draft) {
    doc.save();
    doc.rotate(-30, { origin: [300, 420] });
    doc.font('Helvetica-Bold').fontSize(110).fillColor('#e8e8e8').text('DRAFT', 90, 360, { lineBreak: false });
    doc.restore();
  }
  doc.fillColor('#000000');
  doc.font('Helvetica-Bold').fontSize(20).text(v.company, left, 50, { width: 300 });
  doc
    .font('Helvetica-Bold')
    .fontSize(24)
    .text(v.draft ? `${v.title} (DRAFT)` : v.title, 300, 50, { width: right - 300, align: 'right' });
  doc
    .font('Helvetica')
    .fontSize(11)
    .text(v.number ?? 'Not yet numbered', 300, 82, { width: right - 300, align: 'right' });
  let y = 105;
  for (const [label, value] of v.dates) {
    doc.text(`${label}: ${value}`, 300, y, { width: right - 300, align: 'right' });
    y += 15;
  }
  doc.font('Helvetica-Bold').fontSize(11).text('Bill to', left, 110);
  doc.font('Helvetica').text([v.client.name, ...v.client.address].join('\n'), left, 126, { width: 240 });
  y = Math.max(y, doc.y) + 25;
  // The lines table.
  const cols = { description: left, quantity: 300, unitPrice: 360, tax: 440, total: 480 };
  const header = (at: number) => {
    doc.font('Helvetica-Bold').fontSize(10);
    doc.text('Description', cols.description, at, { width: 245 });
    doc.text('Qty', cols.quantity, at, { width: 55, align: 'right' });
    doc.text('Unit price', cols.unitPrice, at, { width: 75, align: 'right' });
    doc.text('Tax %', cols.tax, at, { width: 35, align: 'right' });
    doc.text(`Amount`, cols.total, at, { width: right - cols.total, align: 'right' });
    doc
      .moveTo(left, at + 14)
      .lineTo(right, at + 14)
      .stroke();
    return at + 20;
  };
  y = header(y);
  doc.font('Helvetica').fontSize(10);
  for (const l of v.lines) {
    const height = doc.heightOfString(l.description, { width: 245 });
    if (y + height > 740) {
      doc.addPage();
      y = header(50);
      doc.font('Helvetica').fontSize(10);
    }
    doc.text(l.description, cols.description, y, { width: 245 });
    doc.text(String(l.quantity), cols.quantity, y, { width: 55, align: 'right' });
    doc.text(fmt(l.unitPrice, v.exponent), cols.unitPrice, y, { width: 75, align: 'right' });
    doc.text(l.taxPercent === null ? '-' : String(l.taxPercent), cols.tax, y, { width: 35, align: 'right' });
    doc.text(fmt(l.subtotal, v.exponent), cols.total, y, { width: right - cols.total, align: 'right' });
    y += Math.max(height, 12) + 6;
  }
  doc.moveTo(left, y).lineTo(right, y).stroke();
  y += 10;
  if (y > 680) {
    doc.addPage();
    y = 50;
  }
  const total = (label: string, units: number, bold = false) => {
    doc.font(bold ? 'Helvetica-Bold' : 'Helvetica').fontSize(bold ? 12 : 10);
    doc.text(label, 330, y, { width: 120, align: 'right' });
    doc.text(`${formatAmount(units, v.exponent)} ${v.currency}`, 450, y, { width: right - 450, align: 'right' });
    y += bold ? 20 : 16;
  };
  total('Subtotal', v.subtotal);
  total('Tax', v.taxTotal);
  total('Total', v.total, true);
  for (const [label, units] of v.extra ?? []) total(label, units);
  if (v.notes) {
    doc
      .font('Helvetica')
      .fontSize(10)
      .text(v.notes, left, y + 20, { width: right - left });
  }
  doc.end();
  return done;
}

/**
 * Stores a rendered document as a `files` item attached to `job`, through the files collection's own
 * write (the same storage and checks as an upload, and its event); answers the `files` collection.
 */
export async function storeDocument(
  request: ActionRequest,
  pdf: Buffer,
  name: string,
  job: number | null,
): Promise<ActionAnswer> {
  const { services, caller } = request;
  const files = services.registry.get('files')!;
  const staged = await services.blobs.stage(Readable.from([pdf]), Number.MAX_SAFE_INTEGER);
  try {
    const item: Item = { name, job: job === null ? null : { id: job } };
    const out = await services.writer.write({
      collection: files,
      caller,
      op: 'create',
      input: [item],
      attached: [{ staged, mimeType: 'application/pdf', name }],
    });
    if (out.result === 'failure') throw new ApiError('generic', 'the document could not be stored');
    return { status: 200, body: { result: 'success', files: out.items, metadata: out.metadata } };
  } finally {
    await staged.discard().catch(() => {});
  }
}
