import { ApiError } from '../../errors.js';
import type { BlobStore } from '../../storage/blobs.js';
import type { FormField } from '../../domain/forms/template.js';
import type { ActionAnswer, ActionDoc, ActionRequest } from '../machinery/collection.js';
import { parties } from '../../domain/billing/document-queries.js';
import { storeDocument } from '../../domain/billing/documents.js';
import type { JobReportView, ReportAnswer } from '../../domain/forms/job-report.js';
import { renderJobReportApart, type ImageSource } from '../../domain/forms/job-report-process.js';
import { fileDigests, reportJob, reportNotes, reportSubmissions, reportVisits, reportWork } from './report-queries.js';
import { partsOf, type DateStyle } from '../../time/format.js';

/** A photo larger than this is not printed (a phone's photo is a few MB). */
const IMAGE_LIMIT = 40 * 1024 * 1024;

const MINUTE: DateStyle = {
  year: 'numeric',
  month: '2-digit',
  day: '2-digit',
  hour: '2-digit',
  minute: '2-digit',
  hourCycle: 'h23',
};

/** A moment in the account's time zone, `2026-12-02 09:15`. */
export function timeIn(zone: string, ms: number): string {
  const d = partsOf('en-CA', zone, MINUTE, ms);
  return `${d.year}-${d.month}-${d.day} ${d.hour}:${d.minute}`;
}

/** An image's bytes from storage, to be streamed to the renderer (undefined: none, or too large). */
const imageSource = (blobs: BlobStore, sha256: string | undefined, kind: 'photo' | 'signature'): ImageSource => ({
  kind,
  async open() {
    if (!sha256) return undefined;
    const opened = await blobs.open(sha256).catch(() => undefined);
    if (!opened) return undefined;
    if (opened.size > IMAGE_LIMIT) {
      opened.stream.destroy();
      return undefined;
    }
    return opened.stream;
  },
});

const answerText = (field: FormField | undefined, v: unknown): string => {
  if (typeof v === 'boolean') return v ? 'Yes' : 'No';
  if (Array.isArray(v)) return v.join(', ');
  if (typeof v === 'string' || typeof v === 'number') return String(v);
  return JSON.stringify(v) ?? '';
};

/** `POST /jobs/:id/report`: the job report as a PDF, stored as a `files` item of the job (as §9's documents). */
export async function report(request: ActionRequest): Promise<ActionAnswer> {
  const { caller, services } = request;
  if (request.item === undefined) throw new ApiError('unknownAction', "'report' applies to one job: /jobs/:id/report");
  const db = services.database.db;
  const account = caller.accountId;
  const job = await reportJob(db, account, request.item);
  if (!job) throw new ApiError('itemNotFound');
  const who = await parties(db, account, job.client_id, job.id);
  const zone = who.timeZone;
  const [visits, submissions, notes, work] = await Promise.all([
    reportVisits(db, account, job.id),
    reportSubmissions(db, account, job.id),
    reportNotes(db, account, job.id),
    reportWork(db, account, job.id),
  ]);
  const parsed = submissions.map((s) => ({
    ...s,
    fields: JSON.parse(s.fields) as FormField[],
    answers: JSON.parse(s.answers) as Record<string, unknown>,
  }));
  const ids = parsed.flatMap((s) =>
    Object.values(s.answers).flatMap((v) => {
      if (Array.isArray(v) && v.every((p) => typeof p === 'object' && p !== null)) return v.map((p) => p.id as number);
      if (v && typeof v === 'object' && 'file' in v) return [(v as { file: { id: number } }).file.id];
      return [];
    }),
  );
  const digests = await fileDigests(db, account, [...new Set(ids)]);
  // Each image once, by its number in `sources`: the renderer decodes them one at a time.
  const sources: ImageSource[] = [];
  const numbers = new Map<string, number>();
  const image = (sha256: string | undefined, kind: 'photo' | 'signature') => {
    const key = `${kind}:${sha256}`;
    if (!numbers.has(key)) numbers.set(key, sources.push(imageSource(services.blobs, sha256, kind)) - 1);
    return numbers.get(key)!;
  };
  const forms: JobReportView<number>['submissions'] = [];
  for (const s of parsed) {
    const byKey = new Map(s.fields.map((f) => [f.key, f]));
    const keys = [
      ...s.fields.map((f) => f.key).filter((k) => k in s.answers),
      ...Object.keys(s.answers).filter((k) => !byKey.has(k)),
    ];
    const answers: ReportAnswer<number>[] = [];
    for (const key of keys) {
      const field = byKey.get(key);
      const label = field?.label ?? key;
      const v = s.answers[key];
      if (field?.type === 'photo' && Array.isArray(v)) {
        answers.push({ label, photos: (v as { id: number }[]).map((p) => image(digests.get(p.id), 'photo')) });
      } else if (field?.type === 'signature' && v && typeof v === 'object') {
        const sig = v as { file: { id: number }; name: string };
        answers.push({
          label,
          signature: {
            image: image(digests.get(sig.file.id), 'signature'),
            name: sig.name,
            time: timeIn(zone, Date.parse(s.submitted)),
          },
        });
      } else answers.push({ label, text: answerText(field, v) });
    }
    forms.push({ template: s.template, by: s.by, submitted: timeIn(zone, Date.parse(s.submitted)), answers });
  }
  const logo = who.seller.logo ? image(who.seller.logo, 'signature') : null;
  const view: JobReportView<number> = {
    company: who.seller.company,
    companyLines: [
      ...who.seller.address,
      ...(who.seller.phone ? [`Phone: ${who.seller.phone}`] : []),
      ...(who.seller.email ? [`E-mail: ${who.seller.email}`] : []),
    ],
    logo,
    paperSize: who.paperSize,
    generated: timeIn(zone, caller.now),
    job: {
      reference: job.reference,
      title: who.job!.title,
      client: [who.client.name, who.client.company, ...who.client.address].filter((x): x is string => !!x),
      site: job.site ?? null,
      address: who.job!.serviceAddress,
    },
    visits: visits.map((vi) => ({
      label: vi.label,
      user: vi.user,
      scheduled: timeIn(zone, vi.start),
      checkIn: vi.checkIn === null ? '-' : timeIn(zone, vi.checkIn),
      checkOut: vi.checkOut === null ? '-' : timeIn(zone, vi.checkOut),
    })),
    submissions: forms,
    notes: notes.map((n) => ({ author: n.author, time: timeIn(zone, n.created), body: n.body })),
    work,
  };
  const pdf = await renderJobReportApart(view, sources);
  return storeDocument(request, pdf, `${job.reference}-report.pdf`, job.id);
}

export const reportDoc: ActionDoc = {
  on: 'item',
  summary: 'Render the job report as a PDF',
  description:
    "Renders the job report (the company; the job's reference, title, client, site and address; every visit with its user and check-in and check-out times; every submission that is not superseded with its answers, photos drawn as images and the signature with the signer's name and time; the notes; the work time per user), stores it as a `files` item of the job and answers the file. Administrators and Employees; Contractors 403.",
  answers: 'files',
};
