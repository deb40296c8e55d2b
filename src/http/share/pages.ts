import crypto from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Selectable } from 'kysely';
import type { DB } from '../../db/types.js';
import { ApiError } from '../../errors.js';
import { renderDocument, type DocumentView } from '../../domain/billing/documents.js';
import { findShared, SHARE_PATH, type DocumentTable, type SharedTable } from '../../domain/customers/share-links.js';
import type { Services } from '../../collections/machinery/services.js';
import { quoteView } from '../../collections/quotes/actions.js';
import { decide, markViewed, Refused, SIGNATURE_MAX_BYTES } from '../../collections/quotes/share.js';
import { invoiceView } from '../../collections/invoices/actions.js';
import { documentRow } from '../../domain/billing/document-queries.js';
import { bookedWindow, bookingHeader, bookingView, bookOffer, NotBooked } from '../../collections/jobs/booking.js';
import { esc, sendPage } from '../html.js';
import { addressBucket, enforceRateLimit } from '../rate-limit/index.js';
import { toApiError } from '../envelope.js';
import {
  bookedSection,
  bookingSection,
  decisionForm,
  documentSection,
  FORM_CSP,
  messagePage,
  notFoundPage,
  page,
  SIGN_CSP,
} from './view.js';

/** A form with a signature of at most 1 MiB (base64: a third more) and the rest. */
const FORM_LIMIT = 2 * 1024 * 1024;
const METHODS = ['GET', 'POST', 'PATCH', 'DELETE', 'PUT', 'HEAD', 'OPTIONS'] as const;
const TITLES: Record<DocumentTable, string> = { quotes: 'Quote', invoices: 'Invoice' };
const SHARED: readonly string[] = ['quotes', 'invoices', 'jobs'];

/** The form's CSRF token, bound to the link: only who holds the link can make it. */
export const shareCsrf = (token: string): string =>
  crypto.createHmac('sha256', token).update('share-form').digest('base64url');

const utf8 = new TextDecoder('utf-8', { fatal: true });

function formOf(body: unknown): Record<string, string> {
  const out: Record<string, string> = Object.create(null);
  if (!Buffer.isBuffer(body)) return out;
  let text: string;
  try {
    text = utf8.decode(body);
  } catch {
    return out;
  }
  for (const [k, v] of new URLSearchParams(text)) if (!(k in out)) out[k] = v;
  return out;
}

interface Shown<T extends SharedTable = DocumentTable> {
  table: T;
  token: string;
  accountId: number;
  id: number;
}

/**
 * The document as the page shows it: `row` is the one the link was found with, when nothing was
 * written since (else it is read again).
 */
async function viewOf(
  services: Services,
  s: Shown,
  row?: Selectable<DB['quotes']> | Selectable<DB['invoices']>,
): Promise<{ view: DocumentView; state: string; version: number }> {
  const db = services.database.db;
  if (s.table === 'quotes') {
    const quote =
      (row as Selectable<DB['quotes']> | undefined) ??
      (await db
        .selectFrom('quotes')
        .selectAll()
        .where('account_id', '=', s.accountId)
        .where('id', '=', s.id)
        .executeTakeFirstOrThrow());
    return { view: await quoteView(services, s.accountId, quote), state: quote.state, version: quote.version };
  }
  const invoice =
    (row as Selectable<DB['invoices']> | undefined) ?? (await documentRow(db, 'invoices', s.accountId, s.id))!;
  return { view: await invoiceView(services, s.accountId, invoice), state: invoice.state, version: invoice.version };
}

/** The page of a shared document, with the decision form on a sent quote. */
async function documentPage(
  app: FastifyInstance,
  reply: FastifyReply,
  s: Shown,
  error?: [number, string],
  row?: Parameters<typeof viewOf>[2],
) {
  const { view, state, version } = await viewOf(app.services, s, row);
  const url = `${SHARE_PATH}/${s.table}/${s.token}`;
  const title = TITLES[s.table];
  let tail: string;
  if (s.table === 'quotes' && state === 'sent') tail = decisionForm(url, shareCsrf(s.token), version, error?.[1]);
  else tail = `<p class="state">This ${title.toLowerCase()} is ${esc(state)}.</p>`;
  const signing = s.table === 'quotes' && state === 'sent';
  const html = page(
    `${title} ${view.number ?? ''} · ${view.seller.company}`,
    documentSection(view, title, `${url}/pdf`) + tail,
    signing,
  );
  return sendPage(reply, error?.[0] ?? 200, html, signing ? SIGN_CSP : FORM_CSP);
}

/** A `slot` button's value: `<arrivalWindowStart>|<user id>`, or undefined when it is not one. */
function slotOf(value: string | undefined): { start: number; userId: number } | undefined {
  const m = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{3})?Z)\|(\d{1,10})$/.exec(value ?? '');
  const start = m ? Date.parse(m[1]) : NaN;
  return m && Number.isFinite(start) ? { start, userId: Number(m[2]) } : undefined;
}

/** A job's booking page: its slots, fresh, with an error above them when a choice was refused. */
async function bookingPage(app: FastifyInstance, reply: FastifyReply, s: Shown<'jobs'>, error?: [number, string]) {
  const view = await bookingView(app.services, s.accountId, s.id, app.clock());
  const url = `${SHARE_PATH}/jobs/${s.token}`;
  const html = page(`Book a visit · ${view.company}`, bookingSection(view, url, shareCsrf(s.token), error?.[1]));
  return sendPage(reply, error?.[0] ?? 200, html, FORM_CSP);
}

/**
 * `GET /share/jobs/<token>` offers the job's slots; `?booked=<visit>` confirms a booking made on
 * it; `POST` with the CSRF token and a `slot` books it as `POST /jobs/:id/book` does, then 303 to
 * the confirmation (a slot taken meanwhile: 409 with the fresh slots).
 */
async function booking(app: FastifyInstance, request: FastifyRequest, reply: FastifyReply, s: Shown<'jobs'>) {
  const url = `${SHARE_PATH}/jobs/${s.token}`;
  if (request.method === 'GET') {
    const booked = (request.query as Record<string, unknown>).booked;
    if (typeof booked === 'string' && /^\d{1,10}$/.test(booked)) {
      const window = await bookedWindow(app.services, s.accountId, s.id, Number(booked));
      if (window) {
        const view = await bookingHeader(app.services, s.accountId, s.id);
        const html = page(`Booked · ${view.company}`, bookedSection(view, window.start, window.end));
        return sendPage(reply, 200, html, FORM_CSP);
      }
    }
    return bookingPage(app, reply, s);
  }
  const form = formOf(request.body);
  if (!csrfMatches(form.csrf, s.token))
    return sendPage(reply, 403, messagePage('Sorry', 'This form has expired. Reload the page and try again.', url));
  const slot = slotOf(form.slot);
  if (!slot) return bookingPage(app, reply, s, [422, 'Please choose one of the times shown.']);
  let visit: number;
  try {
    visit = await bookOffer(app.services, s.accountId, s.id, slot.start, slot.userId, app.clock());
  } catch (err) {
    if (!(err instanceof NotBooked)) throw err;
    return bookingPage(app, reply, s, [err.status, err.message]);
  }
  return reply.code(303).header('location', `${url}?booked=${visit}`).send();
}

/** Whether a form's CSRF token is the link's, compared in constant time. */
function csrfMatches(sent: string | undefined, token: string): boolean {
  const csrf = shareCsrf(token);
  return !!sent && sent.length === csrf.length && crypto.timingSafeEqual(Buffer.from(sent), Buffer.from(csrf));
}

/**
 * The customer's pages (PRODUCT §18): `GET /share/<quotes|invoices>/<token>` (the document),
 * `…/pdf` (its PDF, made afresh), `POST /share/quotes/<token>` (accept or decline),
 * `GET|POST /share/jobs/<token>` (the job's booking page). No bearer token,
 * cookie or X-Version: the token in the path is the whole secret (never logged: src/http/logging.ts).
 * Counted per client address like the sign-in pages (RATE_LIMIT_AUTH). Anything else under
 * `/share/` is the same 404 page, echoing nothing of the URL.
 */
export async function sharePagesPlugin(app: FastifyInstance): Promise<void> {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: FORM_LIMIT }, (_req, body, done) => done(null, body));
  app.setErrorHandler((err, request, reply) => {
    const apiError = toApiError(err);
    if (apiError.status >= 500)
      request.log.error({ err: (err as Error).message, stack: (err as Error).stack }, 'share page failed');
    for (const [k, v] of Object.entries(apiError.headers)) reply.header(k, v);
    if (apiError.status === 404) return sendPage(reply, 404, notFoundPage());
    const message =
      apiError.status === 429
        ? 'Too many requests from your address. Wait a minute and try again.'
        : apiError.status === 413
          ? `The form is too large (a signature is at most ${SIGNATURE_MAX_BYTES / 1024 / 1024} MiB).`
          : apiError.status >= 500
            ? 'Something went wrong on our side. Try again in a moment.'
            : 'This request cannot be completed.';
    return sendPage(reply, apiError.status, messagePage('Sorry', message));
  });

  const handler = async (request: FastifyRequest, reply: FastifyReply) => {
    await enforceRateLimit(reply, app.rateLimits.auth, addressBucket(request));
    const [table, token, extra, ...rest] = ((request.params as { '*'?: string })['*'] ?? '').split('/');
    if (
      !SHARED.includes(table) ||
      !token ||
      rest.length ||
      (extra !== undefined && (extra !== 'pdf' || table === 'jobs'))
    )
      throw new ApiError('itemNotFound');
    const method = request.method;
    if (!(method === 'GET' || (method === 'POST' && table !== 'invoices' && extra === undefined)))
      throw new ApiError('itemNotFound');
    const now = app.clock();
    const found = await findShared(app.services.database.db, table as SharedTable, token, now);
    if (!found) throw new ApiError('itemNotFound');
    if (table === 'jobs') return booking(app, request, reply, { table, token, ...found });
    const s: Shown = { table: table as DocumentTable, token, ...found };
    if (method === 'GET') {
      // Only the first opening writes (and checks again, under the row's lock), then reads the row
      // again; later ones show the row the link was found with.
      const unchanged = found.viewedAt === null ? undefined : (found.row as Parameters<typeof viewOf>[2]);
      if (!unchanged) await markViewed(app.services, s.table, s.accountId, s.id, now);
      if (extra === 'pdf') {
        const { view } = await viewOf(app.services, s, unchanged);
        const pdf = await renderDocument(view);
        return reply
          .code(200)
          .header('content-type', 'application/pdf')
          .header(
            'content-disposition',
            `inline; filename="${(view.number ?? 'document').replace(/[^A-Za-z0-9-]/g, '')}.pdf"`,
          )
          .send(pdf);
      }
      return documentPage(app, reply, s, undefined, unchanged);
    }
    const form = formOf(request.body);
    if (!csrfMatches(form.csrf, token))
      return sendPage(
        reply,
        403,
        messagePage('Sorry', 'This form has expired. Reload the page and try again.', request.url),
      );
    const decision = form.decision;
    const version = Number(form.version);
    if ((decision !== 'accept' && decision !== 'decline') || !Number.isInteger(version))
      return documentPage(app, reply, s, [422, 'Choose to accept or to decline.']);
    try {
      await decide(
        app.services,
        s.accountId,
        s.id,
        {
          decision,
          version,
          signerName: form.signerName,
          signature: form.signature,
          reason: form.reason,
          ip: request.ip,
          userAgent: String(request.headers['user-agent'] ?? ''),
        },
        app.clock(),
      );
    } catch (err) {
      if (!(err instanceof Refused)) throw err;
      if (err.status === 422) return documentPage(app, reply, s, [422, err.message]);
      return sendPage(reply, err.status, messagePage('This quote changed', err.message, request.url));
    }
    return reply.code(303).header('location', request.url).send();
  };
  app.route({ method: [...METHODS], url: `${SHARE_PATH}/*`, handler });
}
