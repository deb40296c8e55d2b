import { openPdf } from '../billing/documents.js';
import type { PrintImage } from './images.js';

/**
 * The job report (PRODUCT §17) as a PDF, on the documents' machinery (documents.ts openPdf: the
 * page, fonts, writer and page numbers): the company; the job's reference, title, client, site and
 * address; every visit with its user and check-in and check-out times; every submission that is not
 * superseded with its answers (photos drawn as images, aspect ratio kept; the signature with the
 * signer's name and time), a long form flowing over pages with its name and column heading
 * repeated; the notes; the work time per user. A job with nothing on it still renders.
 */
/** `I` is how an image is held: the printed image, or (on its way to the renderer) its number. */
export interface ReportAnswer<I = PrintImage | undefined> {
  label: string;
  text?: string;
  photos?: I[];
  signature?: { image: I; name: string; time: string };
}

export interface JobReportView<I = PrintImage | undefined> {
  company: string;
  companyLines: string[];
  logo: I | null;
  paperSize: 'A4' | 'Letter';
  generated: string;
  job: { reference: string; title: string; client: string[]; site: string | null; address: string[] };
  visits: { label: string; user: string; scheduled: string; checkIn: string; checkOut: string }[];
  submissions: { template: string; by: string; submitted: string; answers: ReportAnswer<I>[] }[];
  notes: { author: string; time: string; body: string }[];
  work: { user: string; seconds: number }[];
}

const GREY = '#555555';
const RULE = '#999999';

export const hoursText = (seconds: number) =>
  `${Math.floor(seconds / 3600)}:${String(Math.floor((seconds % 3600) / 60)).padStart(2, '0')}`;

/** The view with each image number replaced by the image it names (`images[n]`). */
export function withImages(v: JobReportView<number | undefined>, images: (PrintImage | undefined)[]): JobReportView {
  const at = (n: number | undefined) => (n === undefined ? undefined : images[n]);
  return {
    ...v,
    logo: v.logo === null ? null : (at(v.logo) ?? null),
    submissions: v.submissions.map((s) => ({
      ...s,
      answers: s.answers.map((a) => ({
        ...a,
        photos: a.photos?.map(at),
        signature: a.signature && { ...a.signature, image: at(a.signature.image) },
      })),
    })),
  };
}

export async function renderJobReport(v: JobReportView): Promise<Buffer> {
  const title = `Job report ${v.job.reference}`;
  const { doc, put, height, finish } = await openPdf(v.paperSize, title, v.company);
  const left = 50;
  const right = doc.page.width - 50;
  const width = right - left;
  const top = 50;
  const bottom = doc.page.height - 65;
  const half = width / 2 - 10;
  let y = top;
  /** What a page that a table flows onto repeats first (the form's name and the column heading). */
  let repeat: (() => void) | undefined;
  const newPage = () => {
    doc.addPage();
    y = top;
    y += put(`${title} (continued)`, left, y, { size: 8.5, color: GREY, width }) + 8;
    repeat?.();
  };
  const room = (h: number) => {
    if (y + h > bottom) newPage();
  };
  const rule = () => {
    doc.strokeColor(RULE).lineWidth(0.7).moveTo(left, y).lineTo(right, y).stroke();
    y += 5;
  };
  const section = (text: string) => {
    repeat = undefined;
    room(60);
    y += 16;
    y += put(text, left, y, { size: 10, weight: 'bold', color: GREY, width }) + 3;
    rule();
  };
  const none = (text: string) => {
    room(16);
    y += put(text, left, y, { color: GREY, width }) + 4;
  };

  // The company on the left, the report's title on the right.
  let ly = top;
  if (v.logo) {
    try {
      doc.image(v.logo.data, left, ly, { fit: [160, 60] });
      ly += 68;
    } catch {
      // Bytes pdfkit cannot read are no logo.
    }
  }
  ly += put(v.company, left, ly, { size: 15, weight: 'bold', width: half });
  for (const l of v.companyLines) ly += put(l, left, ly, { width: half });
  let ry = top;
  ry += put('JOB REPORT', right - half, ry, { size: 22, weight: 'bold', width: half, align: 'right' });
  ry += put(v.job.reference, right - half, ry, { size: 11, width: half, align: 'right' }) + 2;
  ry += put(`Generated: ${v.generated}`, right - half, ry, { width: half, align: 'right' });
  y = Math.max(ly, ry) + 18;

  // The job, its client, site and address.
  const block = (x: number, at: number, heading: string, lines: string[]) => {
    let h = put(heading, x, at, { size: 8.5, weight: 'bold', color: GREY, width: half });
    lines.forEach((l, i) => (h += put(l, x, at + h, { weight: i === 0 ? 'bold' : 'regular', width: half })));
    return h + 6;
  };
  let lh = block(left, y, 'JOB', [v.job.title, `Reference: ${v.job.reference}`]);
  lh += block(left, y + lh, 'CLIENT', v.job.client.length ? v.job.client : ['None']);
  let rh = block(right - half, y, 'SITE', [v.job.site ?? 'None']);
  rh += block(right - half, y + rh, 'ADDRESS', v.job.address.length ? v.job.address : ['None']);
  y += Math.max(lh, rh) + 4;

  // Visits: who, when scheduled, check-in and check-out.
  section('VISITS');
  const vcol = [left, left + 190, left + 300, left + 400];
  const vw = [180, 100, 95, right - (left + 400)];
  const visitHead = () => {
    ['Visit', 'Scheduled', 'Checked in', 'Checked out'].forEach((h, i) =>
      put(h, vcol[i], y, { size: 8.5, weight: 'bold', width: vw[i] }),
    );
    y += 14;
  };
  if (!v.visits.length) none('No visits.');
  else {
    visitHead();
    repeat = visitHead;
    for (const visit of v.visits) {
      const who = `${visit.label}\n${visit.user}`;
      const h = Math.max(height(who, { width: vw[0] }), 24) + 4;
      room(h);
      [who, visit.scheduled, visit.checkIn, visit.checkOut].forEach((t, i) => put(t, vcol[i], y, { width: vw[i] }));
      y += h;
    }
  }

  // Every submission that is not superseded, each answer on a row.
  section('FORMS');
  if (!v.submissions.length) none('No forms submitted.');
  const labelW = 170;
  const answerX = left + labelW + 10;
  const answerW = right - answerX;
  for (const s of v.submissions) {
    repeat = undefined;
    room(70);
    y += 8;
    y += put(s.template, left, y, { size: 11.5, weight: 'bold', width });
    y += put(`Submitted by ${s.by}, ${s.submitted}`, left, y, { size: 8.5, color: GREY, width }) + 4;
    const formHead = (continued: boolean) => () => {
      if (continued) y += put(`${s.template} (continued)`, left, y, { size: 10, weight: 'bold', width }) + 2;
      put('Question', left, y, { size: 8.5, weight: 'bold', width: labelW });
      put('Answer', answerX, y, { size: 8.5, weight: 'bold', width: answerW });
      y += 12;
      rule();
    };
    formHead(false)();
    repeat = formHead(true);
    if (!s.answers.length) none('No answers.');
    for (const a of s.answers) {
      if (a.text !== undefined) {
        const h = Math.max(height(a.label, { width: labelW }), height(a.text || ' ', { width: answerW })) + 5;
        room(h > bottom - top - 60 ? 40 : h);
        const page = doc.page;
        put(a.label, left, y, { width: labelW });
        put(a.text, answerX, y, { width: answerW });
        y = doc.page === page ? y + h : doc.y + 5;
      } else if (a.photos) {
        // Two photos a row, each fitted in its cell with its aspect ratio kept.
        const cellW = (answerW - 10) / 2;
        const cellH = 190;
        let labelled: unknown;
        for (let i = 0; i < a.photos.length; i += 2) {
          const pair = a.photos.slice(i, i + 2);
          const sized = pair.map((p) => {
            if (!p) return { w: cellW, h: 14 };
            const k = Math.min(cellW / p.width, cellH / p.height);
            return { w: p.width * k, h: p.height * k };
          });
          const h = Math.max(...sized.map((z) => z.h)) + 8;
          room(h);
          // The label on the first row, and again on each page the photos flow onto.
          if (doc.page !== labelled)
            put(labelled === undefined ? a.label : `${a.label} (continued)`, left, y, { width: labelW });
          labelled = doc.page;
          pair.forEach((p, j) => {
            const x = answerX + j * (cellW + 10);
            if (p) doc.image(p.data, x, y, { width: sized[j].w, height: sized[j].h });
            else put('(not an image that can be printed)', x, y, { size: 8.5, color: GREY, width: cellW });
          });
          y += h;
        }
      } else if (a.signature) {
        const sig = a.signature;
        const box = { w: Math.min(240, answerW), h: 90 };
        const sized = sig.image
          ? (() => {
              const k = Math.min(box.w / sig.image.width, box.h / sig.image.height, 1);
              return { w: sig.image.width * k, h: sig.image.height * k };
            })()
          : { w: 0, h: 0 };
        room(sized.h + 40);
        put(a.label, left, y, { width: labelW });
        if (sig.image) doc.image(sig.image.data, answerX, y, { width: sized.w, height: sized.h });
        y += sized.h + 2;
        doc
          .strokeColor(RULE)
          .lineWidth(0.5)
          .moveTo(answerX, y)
          .lineTo(answerX + box.w, y)
          .stroke();
        y += 3;
        y += put(`Signed by ${sig.name}`, answerX, y, { weight: 'bold', width: answerW });
        y += put(sig.time, answerX, y, { size: 8.5, color: GREY, width: answerW }) + 6;
      }
    }
  }

  section('NOTES');
  if (!v.notes.length) none('No notes.');
  for (const n of v.notes) {
    const h = height(n.body, { width }) + 16;
    room(h > bottom - top - 60 ? 40 : h);
    y += put(`${n.author}, ${n.time}`, left, y, { size: 8.5, color: GREY, width });
    put(n.body, left, y, { width });
    y = doc.y + 8;
  }

  section('WORK TIME');
  if (!v.work.length) none('No work time recorded.');
  else {
    const total = v.work.reduce((t, w) => t + w.seconds, 0);
    for (const [user, seconds, bold] of [
      ...v.work.map((w) => [w.user, w.seconds, false] as const),
      ['Total', total, true] as const,
    ]) {
      room(16);
      const s = { weight: bold ? ('bold' as const) : ('regular' as const) };
      put(user, left, y, { ...s, width: 300 });
      put(`${hoursText(seconds)} h`, right - 100, y, { ...s, width: 100, align: 'right' });
      y += 16;
    }
  }
  return finish();
}
