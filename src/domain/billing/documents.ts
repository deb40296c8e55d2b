import { Readable } from 'node:stream';
import type PDFKit from 'pdfkit';
import type { Executor } from '../../db/runner.js';
import { ApiError } from '../../errors.js';
import type { BlobStore } from '../../storage/blobs.js';
import type { ActionAnswer, ActionRequest, Item } from '../../collections/machinery/collection.js';
import { invoicePayments, parties, taxRateNames } from './document-queries.js';
import { documentFonts, type DocumentFonts, type FontName } from './fonts.js';
import type { Line } from '../../collections/machinery/lines.js';
import { dateIn, exponentOf, MONEY_SCALE, toScaled } from '../../collections/machinery/money.js';

/**
 * A quote or an invoice as a PDF (PRODUCT §9, issue 50), written once for both: pdfkit (MIT, pure
 * JavaScript) with embedded Unicode fonts (./fonts.ts), stored as a `files` item through the files
 * collection's own write path (its storage: local disk or the object store). It prints what a
 * business's invoice needs: the business (logo, address, phone, e-mail, tax number: the account's
 * members), the client (company, address, e-mail), the job (reference, title, PO number, service
 * address), each line's tax rate by name and percent with a summary per rate, the payments, the
 * payment terms and bank details, and "Page i of N" on every page, on A4 or Letter paper.
 */
export interface DocumentView {
  /** `INVOICE` or `QUOTE`. */
  title: string;
  number: string | null;
  /** A draft says DRAFT across the page. */
  draft: boolean;
  seller: {
    company: string;
    address: string[];
    phone: string | null;
    email: string | null;
    taxNumber: string | null;
    /** PNG or JPEG bytes. */
    logo: Buffer | null;
  };
  client: { name: string; company: string | null; email: string | null; address: string[] };
  job: { reference: string; title: string; orderNumber: string | null; serviceAddress: string[] } | null;
  /** Label and value pairs: `Issue date`, `Due date`, `Valid until`… */
  dates: [string, string][];
  /** Each line with the label of its tax (`VAT 20%`), null without one. */
  lines: (Line & { taxLabel: string | null })[];
  /** Per tax rate: its label, the lines' subtotal it applies to and the tax, in stored units (10^-4). */
  taxes: { label: string; taxable: number; tax: number }[];
  /** Stored units (10^-4). */
  subtotal: number;
  taxTotal: number;
  total: number;
  /** Amount paid and balance, for issued invoices. */
  extra?: [string, number][];
  /** An invoice's payments: date (the account's), method, reference, amount in stored units. */
  payments?: { date: string; method: string; reference: string | null; amount: number }[];
  paymentTerms?: string | null;
  bankDetails?: string | null;
  paperSize: 'A4' | 'Letter';
  currency: string;
  exponent: number;
  notes?: string | null;
}

/** What a quote's and an invoice's rows both hold. */
export interface DocumentRow {
  id: number;
  number: string | null;
  state: string;
  client_id: number | null;
  job_id: number | null;
  lines: string;
  subtotal: number;
  tax_total: number;
  total: number;
  currency: string;
  notes: string | null;
}

/** How a payment method reads on the page. */
const METHODS: Record<string, string> = {
  cash: 'Cash',
  card: 'Card',
  bankTransfer: 'Bank transfer',
  cheque: 'Cheque',
  other: 'Other',
};

/** A logo larger than this is not printed (a document stays small; a logo is a few hundred KB at most). */
const LOGO_LIMIT = 2 * 1024 * 1024;

/** A percentage as written (8.875 → `8.875%`, 20 → `20%`). */
const percentText = (p: number) => `${p}%`;

/**
 * A quote's or an invoice's row as the page shows it, with its business, client, job, the names of
 * its tax rates and, for an invoice, its payments. `own` (its dates) may be made in the account's
 * time zone, read with the rest.
 */
export async function documentView(
  db: Executor,
  blobs: BlobStore,
  accountId: number,
  title: 'QUOTE' | 'INVOICE',
  row: DocumentRow,
  own: Pick<DocumentView, 'dates' | 'extra'> | ((timeZone: string) => Pick<DocumentView, 'dates' | 'extra'>),
): Promise<DocumentView> {
  const who = await parties(db, accountId, row.client_id, row.job_id);
  const lines = JSON.parse(row.lines) as Line[];
  const names = await taxRateNames(db, accountId, [
    ...new Set(lines.flatMap((l) => (l.taxRate ? [l.taxRate.id] : []))),
  ]);
  const taxes = new Map<string, { label: string; taxable: number; tax: number }>();
  const labelled = lines.map((l) => {
    if (l.taxPercent === null) return { ...l, taxLabel: null };
    const name = l.taxRate ? names.get(l.taxRate.id) : undefined;
    const label = `${name ?? 'Tax'} ${percentText(l.taxPercent)}`;
    const sum = taxes.get(label) ?? { label, taxable: 0, tax: 0 };
    sum.taxable += toScaled(l.subtotal, MONEY_SCALE);
    sum.tax += toScaled(l.tax, MONEY_SCALE);
    taxes.set(label, sum);
    return { ...l, taxLabel: label };
  });
  const invoice = title === 'INVOICE';
  const payments = invoice
    ? (await invoicePayments(db, accountId, row.id)).map((p) => ({
        date: dateIn(who.timeZone, Number(p.paid_at)),
        method: METHODS[p.method] ?? p.method,
        reference: p.reference,
        amount: Number(p.amount),
      }))
    : undefined;
  let logo: Buffer | null = null;
  if (who.seller.logo) logo = (await readBlob(blobs, who.seller.logo, LOGO_LIMIT)) ?? null;
  return {
    title,
    number: row.number,
    draft: row.state === 'draft',
    seller: { ...who.seller, logo },
    client: who.client,
    job: who.job,
    ...(typeof own === 'function' ? own(who.timeZone) : own),
    lines: labelled,
    taxes: [...taxes.values()],
    subtotal: Number(row.subtotal),
    taxTotal: Number(row.tax_total),
    total: Number(row.total),
    payments,
    paymentTerms: invoice ? who.paymentTerms : null,
    bankDetails: invoice ? who.bankDetails : null,
    paperSize: who.paperSize,
    currency: row.currency,
    exponent: exponentOf(row.currency),
    notes: row.notes,
  };
}

/** A stored file's bytes whole (a logo), or undefined when gone or past `limit`. */
async function readBlob(blobs: BlobStore, sha256: string, limit: number): Promise<Buffer | undefined> {
  const opened = await blobs.open(sha256);
  if (!opened) return undefined;
  if (opened.size > limit) {
    opened.stream.destroy();
    return undefined;
  }
  const chunks: Buffer[] = [];
  for await (const chunk of opened.stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
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

export interface Style {
  size?: number;
  weight?: FontName;
  color?: string;
  width: number;
  align?: 'left' | 'right' | 'center';
}

const GREY = '#555555';
const RULE = '#999999';

/**
 * Text drawn in runs of the font that has its glyphs (./fonts.ts): answers the height it took.
 * Text of one run is pdfkit's own wrapping and alignment; mixed runs are laid out left to right
 * with `continued` (wrapping as one paragraph), or, right-aligned or centred on one line, from the
 * summed widths of the runs.
 */
function writer(doc: PDFKit.PDFDocument, fonts: DocumentFonts) {
  const put = (text: string, x: number, y: number, s: Style): number => {
    const weight = s.weight ?? 'regular';
    doc.fontSize(s.size ?? 9.5).fillColor(s.color ?? '#000000');
    const runs = fonts.runs(text, weight);
    const opts = { width: s.width, align: s.align ?? 'left' };
    if (runs.length <= 1) {
      doc.font(runs[0]?.font ?? weight).text(text, x, y, opts);
      return doc.y - y;
    }
    // One baseline for every run: the main font's, whatever font draws the run.
    const baseline = -fonts.ascent(weight, s.size ?? 9.5);
    if (s.align === 'right' || s.align === 'center') {
      const widths = runs.map((r) => doc.font(r.font).widthOfString(r.text));
      const total = widths.reduce((a, b) => a + b, 0);
      if (total <= s.width) {
        let at = s.align === 'right' ? x + s.width - total : x + (s.width - total) / 2;
        runs.forEach((r, i) => {
          doc.font(r.font).text(r.text, at, y, { lineBreak: false, baseline });
          at += widths[i];
        });
        return doc.currentLineHeight(true);
      }
    }
    runs.forEach((r, i) => {
      const more = { width: s.width, continued: i < runs.length - 1, baseline };
      if (i === 0) doc.font(r.font).text(r.text, x, y, more);
      else doc.font(r.font).text(r.text, more);
    });
    return doc.y - y;
  };
  /** The height `text` takes at `width` (mixed runs measured in the wider CJK font, so never short). */
  const height = (text: string, s: Style): number => {
    const weight = s.weight ?? 'regular';
    const runs = fonts.runs(text, weight);
    const font = runs.length <= 1 ? (runs[0]?.font ?? weight) : weight === 'bold' ? 'cjkBold' : 'cjkRegular';
    return doc
      .font(font)
      .fontSize(s.size ?? 9.5)
      .heightOfString(text, { width: s.width });
  };
  return { put, height };
}

/**
 * A new PDF of the account's documents (a quote, an invoice, a job report): the page, the fonts
 * and the text writer every document shares; `finish` numbers the pages and resolves with the bytes.
 */
export async function openPdf(paperSize: 'A4' | 'Letter', title: string, author: string) {
  const PDFDocument = await (pdfkit ??= import('pdfkit').then((m) => m.default as typeof PDFKit));
  const doc = new PDFDocument({
    size: paperSize === 'Letter' ? 'LETTER' : 'A4',
    margin: 50,
    bufferPages: true,
    info: { Title: title, Author: author },
  });
  const chunks: Buffer[] = [];
  const done = new Promise<Buffer>((resolve, reject) => {
    doc.on('data', (c: Buffer) => chunks.push(c));
    doc.on('end', () => resolve(Buffer.concat(chunks)));
    doc.on('error', reject);
  });
  const fonts = await documentFonts(doc);
  const { put, height } = writer(doc, fonts);
  /** Every page: DRAFT across it (drafts), and the name and "Page i of N" at its foot; then the bytes. */
  const finish = (draft = false): Promise<Buffer> => {
    const left = 50;
    const half = (doc.page.width - 100) / 2 - 10;
    const pages = doc.bufferedPageRange();
    for (let i = pages.start; i < pages.start + pages.count; i++) {
      doc.switchToPage(i);
      const margin = doc.page.margins.bottom;
      doc.page.margins.bottom = 0;
      if (draft) {
        doc.save();
        doc.rotate(-30, { origin: [doc.page.width / 2, doc.page.height / 2] });
        doc
          .font('bold')
          .fontSize(110)
          .fillColor('#000000')
          .fillOpacity(0.07)
          .text('DRAFT', doc.page.width / 2 - 190, doc.page.height / 2 - 60, { lineBreak: false });
        doc.restore();
      }
      doc.fillOpacity(1);
      const foot = doc.page.height - 40;
      put(title, left, foot, { size: 8, color: GREY, width: half });
      put(`Page ${i - pages.start + 1} of ${pages.count}`, doc.page.width - 50 - half, foot, {
        size: 8,
        color: GREY,
        width: half,
        align: 'right',
      });
      doc.page.margins.bottom = margin;
    }
    doc.end();
    return done;
  };
  return { doc, fonts, put, height, finish };
}

/** Renders the document; resolves with the PDF's bytes. */
export async function renderDocument(v: DocumentView): Promise<Buffer> {
  const name = `${v.title} ${v.number ?? 'DRAFT'}`;
  const { doc, put, height, finish } = await openPdf(v.paperSize, name, v.seller.company);
  const left = 50;
  const right = doc.page.width - 50;
  const width = right - left;
  const top = 50;
  /** Content ends here; the page number sits below. */
  const bottom = doc.page.height - 65;
  const money = (units: number) => formatAmount(units, v.exponent);

  // The header: the business on the left (logo, name, address, contacts, tax number), the
  // document's title, number and dates on the right.
  const half = width / 2 - 10;
  const rightX = right - half;
  let ly = top;
  if (v.seller.logo) {
    try {
      doc.image(v.seller.logo, left, ly, { fit: [160, 60] });
      ly += 68;
    } catch {
      // Bytes pdfkit cannot read are no logo; the rest of the page is still printed.
    }
  }
  ly += put(v.seller.company, left, ly, { size: 15, weight: 'bold', width: half });
  for (const l of v.seller.address) ly += put(l, left, ly, { width: half });
  if (v.seller.phone) ly += put(`Phone: ${v.seller.phone}`, left, ly, { width: half });
  if (v.seller.email) ly += put(`E-mail: ${v.seller.email}`, left, ly, { width: half });
  if (v.seller.taxNumber) ly += put(`Tax number: ${v.seller.taxNumber}`, left, ly, { width: half });

  let ry = top;
  ry += put(v.draft ? `${v.title} (DRAFT)` : v.title, rightX, ry, {
    size: 22,
    weight: 'bold',
    width: half,
    align: 'right',
  });
  ry += put(v.number ?? 'Not yet numbered', rightX, ry, { size: 11, width: half, align: 'right' }) + 2;
  for (const [label, value] of v.dates) ry += put(`${label}: ${value}`, rightX, ry, { width: half, align: 'right' });
  let y = Math.max(ly, ry) + 18;

  // The client and the job, side by side.
  const block = (x: number, heading: string, lines: string[], at: number) => {
    let h = put(heading, x, at, { size: 8.5, weight: 'bold', color: GREY, width: half });
    lines.forEach((l, i) => (h += put(l, x, at + h, { weight: i === 0 ? 'bold' : 'regular', width: half })));
    return h;
  };
  const billTo = [v.client.name, v.client.company, ...v.client.address, v.client.email].filter((x): x is string => !!x);
  const left2 = block(left, 'BILL TO', billTo, y);
  let right2 = 0;
  if (v.job) {
    const jobLines = [
      `${v.job.reference}: ${v.job.title}`,
      ...(v.job.orderNumber ? [`PO number: ${v.job.orderNumber}`] : []),
    ];
    right2 = block(rightX, 'JOB', jobLines, y);
    if (v.job.serviceAddress.length) {
      right2 += 6;
      right2 += put('SERVICE ADDRESS', rightX, y + right2, { size: 8.5, weight: 'bold', color: GREY, width: half });
      for (const l of v.job.serviceAddress) right2 += put(l, rightX, y + right2, { width: half });
    }
  }
  y += Math.max(left2, right2) + 20;

  // The lines table; its heading is repeated on every page it flows onto.
  const amountW = 80;
  const taxW = 105;
  const unitW = 70;
  const qtyW = 40;
  const gap = 8;
  const cols = {
    amount: right - amountW,
    tax: right - amountW - gap - taxW,
    unit: right - amountW - gap - taxW - gap - unitW,
    qty: right - amountW - gap - taxW - gap - unitW - gap - qtyW,
  };
  const descW = cols.qty - gap - left;
  const newPage = () => {
    doc.addPage();
    let at = top;
    at += put(`${name} (continued)`, left, at, { size: 8.5, color: GREY, width }) + 8;
    return at;
  };
  const heading = (at: number) => {
    const s = { size: 8.5, weight: 'bold' as const };
    put('Description', left, at, { ...s, width: descW });
    put('Qty', cols.qty, at, { ...s, width: qtyW, align: 'right' });
    put('Unit price', cols.unit, at, { ...s, width: unitW, align: 'right' });
    put('Tax', cols.tax, at, { ...s, width: taxW, align: 'right' });
    put(`Amount (${v.currency})`, cols.amount, at, { ...s, width: amountW, align: 'right' });
    doc
      .strokeColor(RULE)
      .lineWidth(0.7)
      .moveTo(left, at + 14)
      .lineTo(right, at + 14)
      .stroke();
    return at + 20;
  };
  /** Room for `h` more points, or a new page (with the table heading when in the table). */
  const room = (h: number, table = false) => {
    if (y + h <= bottom) return;
    y = newPage();
    if (table) y = heading(y);
  };
  room(60);
  y = heading(y);
  for (const l of v.lines) {
    const taxText = l.taxLabel ?? '-';
    const h = Math.max(height(l.description, { width: descW }), height(taxText, { width: taxW })) + 4;
    // A row taller than a page starts where it is, when a few of its lines fit.
    room(h > bottom - top - 60 ? 40 : h, true);
    // The figures first, on the row's page: a description longer than a page (up to 10,000
    // characters) flows on over the next pages, and the table goes on below its end.
    const page = doc.page;
    put(String(l.quantity), cols.qty, y, { width: qtyW, align: 'right' });
    put(fmt(l.unitPrice, v.exponent), cols.unit, y, { width: unitW, align: 'right' });
    put(taxText, cols.tax, y, { width: taxW, align: 'right' });
    put(fmt(l.subtotal, v.exponent), cols.amount, y, { width: amountW, align: 'right' });
    put(l.description, left, y, { width: descW });
    y = doc.page === page ? y + h : doc.y + 4;
  }
  doc.strokeColor(RULE).moveTo(left, y).lineTo(right, y).stroke();
  y += 10;

  // Totals on the right: subtotal, tax per rate, total, paid and balance.
  const labelX = right - 300;
  const total = (label: string, units: number, bold = false) => {
    room(bold ? 22 : 16);
    const s = { size: bold ? 11.5 : 9.5, weight: bold ? ('bold' as const) : ('regular' as const) };
    put(label, labelX, y, { ...s, width: 190, align: 'right' });
    put(`${money(units)} ${v.currency}`, right - 105, y, { ...s, width: 105, align: 'right' });
    y += bold ? 22 : 16;
  };
  total('Subtotal', v.subtotal);
  // The tax per rate: its name and percent, the amount it applies to, the tax.
  for (const t of v.taxes) total(`${t.label} on ${money(t.taxable)}`, t.tax);
  if (v.taxes.length !== 1) total(v.taxes.length ? 'Tax total' : 'Tax', v.taxTotal);
  total('Total', v.total, true);
  for (const [label, units] of v.extra ?? []) total(label, units);

  /** A titled paragraph (notes, terms, bank details), kept whole on a page when it fits one. */
  const section = (title: string, text: string) => {
    const h = height(text, { width }) + 16;
    room(h > bottom - top - 60 ? 40 : h + 12);
    y += 12;
    y += put(title, left, y, { size: 8.5, weight: 'bold', color: GREY, width });
    // A text longer than the page flows on over the next ones: go on where it ended.
    put(text, left, y, { width });
    y = doc.y;
  };

  // Payments (an invoice's): date, method, reference and amount.
  if (v.payments?.length) {
    room(60);
    y += 14;
    y += put('PAYMENTS', left, y, { size: 8.5, weight: 'bold', color: GREY, width });
    const pcol = { date: left, method: left + 80, reference: left + 180 };
    const refW = right - 110 - pcol.reference;
    for (const p of v.payments) {
      const ref = p.reference ?? '';
      const h = Math.max(height(ref || ' ', { width: refW }), 12) + 4;
      room(h);
      put(p.date, pcol.date, y, { width: 75 });
      put(p.method, pcol.method, y, { width: 95 });
      if (ref) put(ref, pcol.reference, y, { width: refW });
      put(`${money(p.amount)} ${v.currency}`, right - 105, y, { width: 105, align: 'right' });
      y += h;
    }
  }
  if (v.paymentTerms) section('PAYMENT TERMS', v.paymentTerms);
  if (v.bankDetails) section('BANK DETAILS', v.bankDetails);
  if (v.notes) section('NOTES', v.notes);

  return finish(v.draft);
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
